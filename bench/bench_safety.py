"""Memory-write safety: how many attacks each layer stops, at what false-positive cost.

Corpus: the generated dev and held-out test splits of ``bench/safety_corpus.py``
(attack categories × 20 languages, obfuscated variants; benign preferences,
coding rules, personal notes, generic notes and hard negatives). Layers:

- **catalogue (Hermes)**: the patterns of scope ``strict`` that the original
  Hermes catalogue had, the in-run baseline;
- **catalogue (ours)**: the whole current catalogue, invisible characters included;
- **detector**: the learned model alone (block, and block or held for review);
- **combined**: what ``MemoryStore.add`` does: catalogue or detector block
  refuses, the detector's review band holds.

"Stopped" counts refused and held writes; a false positive is a benign entry
refused or held. Throughput is single-threaded scans of the whole corpus.

Run ``python bench/bench_safety.py``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import detector_data  # noqa: E402
import safety_corpus  # noqa: E402
from hermes_memory_builtin import threats  # noqa: E402
from hermes_memory_builtin.detector import WEIGHTS_FILE, load_detector  # noqa: E402
from hermes_memory_builtin.provenance import MIN_HOLD_WORDS  # noqa: E402
from report import write_section  # noqa: E402

# The ids the original Hermes catalogue had; ours added the rest.
HERMES_IDS = {
    "prompt_injection", "sys_prompt_override", "disregard_rules", "bypass_restrictions",
    "html_comment_injection", "hidden_div", "translate_execute", "deception_hide", "exfil_curl",
    "exfil_wget", "read_secrets", "role_hijack", "role_pretend", "leak_system_prompt",
    "remove_filters", "fake_update", "send_to_url", "context_exfil", "ssh_backdoor",
    "ssh_access", "hermes_env", "agent_config_mod", "hermes_config_mod", "hardcoded_secret",
}  # fmt: skip


def hermes_catalogue(text: str) -> bool:
    return any(i in HERMES_IDS for i in threats.scan_for_threats(text, "strict"))


def our_catalogue(text: str) -> bool:
    return threats.first_threat_message(text, "strict") is not None


def real_held_out(detector: object) -> list[str]:
    """Rows for the held-out (dev, test) splits of the real sets, or a note if not fetched."""
    problem = detector_data.verify()
    if problem:
        return ["", f"Real held-out sets not measured ({problem})."]
    rows = [(src, split, 1, text) for src, split, text in detector_data.real_attacks()]
    rows += [(src, split, 0, text) for src, split, text in detector_data.real_benign()]
    with contextlib.suppress(SystemExit):  # REALTALK not fetched: its row shows "–"
        rows += [(src, split, 0, text) for src, split, text in detector_data.chat_messages()]
    lines = [
        "",
        "Real text the generated corpus never saw (bench/detector_data.py; split by source "
        "file; dev was used to calibrate the review threshold, test only reported):",
        "",
        "| set | dev: catalogue / detector / combined | **test: catalogue / detector / "
        "combined** |",
        "|---|---:|---:|",
    ]
    groups = [("attacks stopped: " + s["name"], s["name"], 1) for s in detector_data.ATTACK_SOURCES]
    groups += [("false positives: docs", "docs", 0), ("false positives: stdlib", "stdlib", 0)]
    groups += [("false positives: REALTALK chat messages", "chat", 0)]
    for title, source, label in groups:
        cells = []
        for split in ("dev", "test"):
            texts = [
                t for src, sp, lab, t in rows if src == source and sp == split and lab == label
            ]
            if not texts:
                cells.append("–")
                continue
            cat = [our_catalogue(t) for t in texts]
            det = [detector.verdict(t).action != "allow" for t in texts]  # type: ignore[attr-defined]
            both = [a or b for a, b in zip(cat, det, strict=True)]
            cells.append(
                " / ".join(f"{100 * sum(v) / len(v):.1f} %" for v in (cat, det, both))
                + f" (n={len(texts)})"
            )
        lines.append(f"| {title} | {cells[0]} | {cells[1]} |")
    return lines


def main() -> None:
    detector = load_detector()
    samples = [s for s in safety_corpus.generate() if s.split in ("dev", "test")]
    layers = ("catalogue (Hermes)", "catalogue (ours)", "detector: block", "detector: block+hold",
              "combined (block)", "combined (block+hold)")  # fmt: skip
    verdicts: dict[str, list[bool]] = {name: [] for name in layers}
    for sample in samples:
        verdict = detector.verdict(sample.text)
        words = len(sample.text.split())
        held = verdict.action == "review" and words >= MIN_HOLD_WORDS
        ours = our_catalogue(sample.text)
        for name, stopped in zip(
            layers,
            (hermes_catalogue(sample.text), ours, verdict.action == "block",
             verdict.action == "block" or held, ours or verdict.action == "block",
             ours or verdict.action == "block" or held),
            strict=True,
        ):  # fmt: skip
            verdicts[name].append(stopped)

    def rate(name: str, split: str, label: int, key: str | None = None, value: str = "") -> str:
        hits = [
            v
            for v, s in zip(verdicts[name], samples, strict=True)
            if s.split == split and s.label == label and (key is None or getattr(s, key) == value)
        ]
        return f"{100 * sum(hits) / len(hits):.1f} %" if hits else "–"

    lines = [
        "| layer | dev attacks stopped | dev false positives | **test attacks stopped** "
        "| **test false positives** |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in layers:
        lines.append(
            f"| {name} | {rate(name, 'dev', 1)} | {rate(name, 'dev', 0)} | "
            f"{rate(name, 'test', 1)} | {rate(name, 'test', 0)} |"
        )
    test = [s for s in samples if s.split == "test"]
    by_family: dict[str, set[str]] = defaultdict(set)
    for s in test:
        by_family["family" if s.label else "benign"].add(s.family)
    lines += ["", "Held-out test split by attack category (combined block+hold vs Hermes):", ""]
    lines += ["| category | combined | Hermes catalogue |", "|---|---:|---:|"]
    for family in sorted(by_family["family"]):
        lines.append(
            f"| {family} | {rate('combined (block+hold)', 'test', 1, 'family', family)} | "
            f"{rate('catalogue (Hermes)', 'test', 1, 'family', family)} |"
        )
    languages = sorted({s.language for s in test if s.label})
    lines += ["", "By language (test attacks, combined block+hold / Hermes catalogue): "]
    lines.append(
        ", ".join(
            f"{lang} {rate('combined (block+hold)', 'test', 1, 'language', lang)}"
            f" / {rate('catalogue (Hermes)', 'test', 1, 'language', lang)}"
            for lang in languages
        )
        + "."
    )
    lines += ["", "False positives by benign family (test, combined block+hold): "]
    lines.append(
        ", ".join(
            f"{fam} {rate('combined (block+hold)', 'test', 0, 'family', fam)}"
            for fam in sorted(by_family["benign"])
        )
        + "."
    )
    lines += real_held_out(detector)
    texts = [s.text for s in samples]
    timings = {}
    for name, fn in (
        ("catalogue", our_catalogue),
        ("detector", detector.score),
    ):
        wall, cpu = time.perf_counter(), time.process_time()
        for text in texts:
            fn(text)
        timings[name] = (
            (time.perf_counter() - wall) / len(texts) * 1e3,
            (time.process_time() - cpu) / len(texts) * 1e3,
        )
    size = (Path(threats.__file__).parent / "data" / WEIGHTS_FILE).stat().st_size
    lines += [
        "",
        f"Scan cost per entry ({len(texts):,} entries, mean): catalogue "
        f"{timings['catalogue'][0]:.3f} ms wall / {timings['catalogue'][1]:.3f} ms CPU; "
        f"detector {timings['detector'][0]:.3f} ms wall / {timings['detector'][1]:.3f} ms CPU "
        f"({timings['detector'][0] / timings['catalogue'][0]:.1f}× the catalogue). "
        f"Shipped model: {size / 1024:.0f} KiB (int8 weights, "
        f"{len(os.listdir(Path(threats.__file__).parent / 'data'))} files); thresholds review "
        f"{detector.review:.2f}, block {detector.block:.2f}.",
        "",
        "The first tables use corpora generated from this project's templates, and their "
        "test split shares templates with training (fillers and samples differ), so they "
        "show the layers working; the real attack sets are small (a few dozen prompts). "
        "Measure independent attacks on the reserved evaluation suites.",
    ]
    write_section("safety", "Memory-write safety: catalogue, detector, combined", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
