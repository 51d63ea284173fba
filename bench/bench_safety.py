"""Memory-write safety: how many attacks each layer stops, at what false-positive cost.

Two corpora:

- the generated dev and held-out test splits of ``bench/safety_corpus.py``
  (attack categories × 20 languages, obfuscated variants; benign preferences,
  coding rules, personal notes, generic notes and hard negatives);
- real public text (``bench/detector_data.py``, fetched at pinned commits):
  the *within-source* test split of the sources the detector is trained on
  (whole groups it never saw: attack techniques, goals, files, intents) and
  the *by-source* held-out sources it never saw at all (llm-adaptive-attacks,
  Tensor Trust, XSafety goal hijacking in French, Japanese, Russian and Spanish,
  awesome-copilot agent files, BANKING77, XSafety personal statements, the
  Universal Dependencies sentences in Japanese and Russian, Tatoeba's sentences in
  14 languages not trained on, REALTALK's even chats).

Layers:

- **catalogue (Hermes)**: the patterns of scope ``strict`` that the original
  Hermes catalogue had, the in-run baseline;
- **catalogue (ours)**: the whole current catalogue, invisible characters included;
- **detector**: the learned model alone, as the store applies it to a write the
  model makes (held in the review band when it has four words or more);
- **combined**: what ``MemoryStore.add`` does: the catalogue refuses, the
  detector holds.

"Stopped" counts refused and held writes; a false positive is a benign entry
refused or held. Throughput is single-threaded scans.

Run ``python bench/bench_safety.py`` (the real sets: ``python bench/detector_data.py
fetch`` and ``python bench/public_sets.py fetch`` first).
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import detector_data  # noqa: E402
import safety_corpus  # noqa: E402
from hermes_memory_builtin import threats  # noqa: E402
from hermes_memory_builtin.detector import WEIGHTS_FILE, load_detector  # noqa: E402
from hermes_memory_builtin.provenance import screen  # noqa: E402
from report import write_section  # noqa: E402

# The ids the original Hermes catalogue had; ours added the rest.
HERMES_IDS = {
    "prompt_injection", "sys_prompt_override", "disregard_rules", "bypass_restrictions",
    "html_comment_injection", "hidden_div", "translate_execute", "deception_hide", "exfil_curl",
    "exfil_wget", "read_secrets", "role_hijack", "role_pretend", "leak_system_prompt",
    "remove_filters", "fake_update", "send_to_url", "context_exfil", "ssh_backdoor",
    "ssh_access", "hermes_env", "agent_config_mod", "hermes_config_mod", "hardcoded_secret",
}  # fmt: skip
LAYERS = ("catalogue (Hermes)", "catalogue (ours)", "detector", "combined")


def hermes_catalogue(text: str) -> bool:
    return any(i in HERMES_IDS for i in threats.scan_for_threats(text, "strict"))


def our_catalogue(text: str) -> bool:
    return threats.first_threat_message(text, "strict") is not None


def detector_stops(text: str) -> bool:
    """What the store does with a model-written entry: held or refused by the detector."""
    return screen(text, "model").action != "store"


def layer_verdicts(texts: Sequence[str]) -> dict[str, list[bool]]:
    hermes = [hermes_catalogue(t) for t in texts]
    ours = [our_catalogue(t) for t in texts]
    detector = [detector_stops(t) for t in texts]
    combined = [a or b for a, b in zip(ours, detector, strict=True)]
    return dict(zip(LAYERS, (hermes, ours, detector, combined), strict=True))


def percent(hits: Sequence[bool]) -> str:
    return f"{100 * sum(hits) / len(hits):.1f} %" if hits else "–"


def generated_section() -> tuple[list[str], list[str]]:
    samples = [s for s in safety_corpus.generate() if s.split in ("dev", "test")]
    verdicts = layer_verdicts([s.text for s in samples])

    def rate(name: str, split: str, label: int, key: str | None = None, value: str = "") -> str:
        return percent(
            [
                v
                for v, s in zip(verdicts[name], samples, strict=True)
                if s.split == split
                and s.label == label
                and (key is None or getattr(s, key) == value)
            ]
        )

    lines = [
        "### Generated corpus",
        "",
        "| layer | dev attacks stopped | dev false positives | **test attacks stopped** "
        "| **test false positives** |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in LAYERS:
        lines.append(
            f"| {name} | {rate(name, 'dev', 1)} | {rate(name, 'dev', 0)} | "
            f"{rate(name, 'test', 1)} | {rate(name, 'test', 0)} |"
        )
    test = [s for s in samples if s.split == "test"]
    families = sorted({s.family for s in test if s.label})
    lines += ["", "Test attacks by category, combined / Hermes catalogue: "]
    lines.append(
        ", ".join(
            f"{f} {rate('combined', 'test', 1, 'family', f)} / "
            f"{rate('catalogue (Hermes)', 'test', 1, 'family', f)}"
            for f in families
        )
        + "."
    )
    languages = sorted({s.language for s in test if s.label})
    lines += ["", "Test attacks by language, combined / Hermes catalogue: "]
    lines.append(
        ", ".join(
            f"{lang} {rate('combined', 'test', 1, 'language', lang)} / "
            f"{rate('catalogue (Hermes)', 'test', 1, 'language', lang)}"
            for lang in languages
        )
        + "."
    )
    benign = sorted({s.family for s in test if not s.label})
    lines += ["", "Test false positives by benign family, combined: "]
    lines.append(", ".join(f"{f} {rate('combined', 'test', 0, 'family', f)}" for f in benign) + ".")
    return lines, [s.text for s in samples]


def _table(
    title: str,
    texts: list[detector_data.Text],
    verdicts: dict[str, list[bool]],
    key: Callable[[detector_data.Text], str],
) -> list[str]:
    groups: dict[str, list[int]] = defaultdict(list)
    for index, text in enumerate(texts):
        groups[key(text)].append(index)
    lines = [
        f"| {title} | n | " + " | ".join(LAYERS) + " |",
        "|---|---:|" + "---:|" * len(LAYERS),
    ]
    for name in sorted(groups):
        rows = groups[name]
        cells = [percent([verdicts[layer][i] for i in rows]) for layer in LAYERS]
        lines.append(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")
    return lines


def _split_name(text: detector_data.Text) -> str:
    """REALTALK is never trained on: its reported (even) chats count as held out by source."""
    by_source = text.split == "heldout" or text.source == "REALTALK"
    return "by source" if by_source else "within source"


def real_section() -> tuple[list[str], list[str]]:
    problem = detector_data.verify()
    if problem:
        return ["", f"Real sets not measured ({problem})."], []
    try:
        real = detector_data.real_texts()
    except SystemExit as missing:  # REALTALK not fetched: measured without it
        print(missing, file=sys.stderr)
        real = detector_data.real_texts(with_chat=False)
    measured = [t for t in real if t.split in ("dev", "test", "heldout")]
    verdicts = layer_verdicts([t.text for t in measured])
    index = {id(t): i for i, t in enumerate(measured)}

    def subset(keep: Callable[[detector_data.Text], bool]) -> tuple[list, dict]:
        chosen = [t for t in measured if keep(t)]
        picked = {k: [v[index[id(t)]] for t in chosen] for k, v in verdicts.items()}
        return chosen, picked

    lines = [
        "",
        "### Real public text",
        "",
        "Within source: the test split of a source the detector is trained on (groups it "
        "never saw); by source: a whole source it never saw. Dev (calibration) figures are "
        "not shown here; they are in `detector.json`.",
        "",
    ]
    attacks, attack_v = subset(lambda t: t.label == 1 and t.split != "dev")
    totals = _table("attacks stopped", attacks, attack_v, _split_name)
    lines += [*totals, ""]
    lines += _table(
        "attacks stopped, per source",
        attacks,
        attack_v,
        lambda t: f"{t.source} ({_split_name(t)})",
    )
    lines += [""]
    lines += _table(
        "attacks stopped, per category",
        attacks,
        attack_v,
        lambda t: f"{t.category} ({_split_name(t)})",
    )
    lines += [""]
    lines += _table("attacks stopped, per language", attacks, attack_v, lambda t: f"{t.language}")
    benign, benign_v = subset(lambda t: t.label == 0 and t.split != "dev")
    lines += [""]
    lines += _table("false positives", benign, benign_v, _split_name)
    lines += [""]
    lines += _table("false positives, per language", benign, benign_v, lambda t: f"{t.language}")
    lines += [""]
    lines += _table(
        "false positives, per benign source",
        benign,
        benign_v,
        lambda t: f"{t.source}: {t.category} ({_split_name(t)})",
    )
    sample = [t.text for t in measured if t.split in ("test", "heldout")]
    return lines, sample


def timing(texts: list[str]) -> dict[str, tuple[float, float, float]]:
    """(mean wall ms, mean CPU ms, slowest wall ms) per entry for each scanner."""
    detector = load_detector()
    found = {}
    for name, fn in (("catalogue", our_catalogue), ("detector", detector.score)):
        slowest = 0.0
        wall, cpu = time.perf_counter(), time.process_time()
        for text in texts:
            start = time.perf_counter()
            fn(text)
            slowest = max(slowest, time.perf_counter() - start)
        found[name] = (
            (time.perf_counter() - wall) / len(texts) * 1e3,
            (time.process_time() - cpu) / len(texts) * 1e3,
            slowest * 1e3,
        )
    return found


def main() -> None:
    detector = load_detector()
    generated, generated_texts = generated_section()
    real, real_texts = real_section()
    lines = generated + real
    load = os.getloadavg()[0]
    data = Path(threats.__file__).parent / "data"
    size = (data / WEIGHTS_FILE).stat().st_size
    for label, texts in (("generated", generated_texts), ("real", real_texts)):
        if not texts:
            continue
        cost = timing(texts)
        cat, det = cost["catalogue"], cost["detector"]
        lines += [
            "",
            f"Scan cost per entry ({len(texts):,} {label} entries, mean chars "
            f"{sum(map(len, texts)) / len(texts):,.0f}): catalogue {cat[0]:.3f} ms wall / "
            f"{cat[1]:.3f} ms CPU (slowest {cat[2]:.1f} ms); detector {det[0]:.3f} ms wall / "
            f"{det[1]:.3f} ms CPU (slowest {det[2]:.1f} ms; {det[0] / cat[0]:.1f}× the "
            "catalogue).",
        ]
    lines += [
        "",
        f"Shipped model: {size / 1024:.0f} KiB (int8 weights, {len(os.listdir(data))} files; "
        f"scoring needs the standard library only); thresholds review {detector.review:.2f}, "
        f"block {detector.block:.2f}. Load average at the start: {load:.1f} (2 cores shared).",
        "",
        "The generated test split shares templates with training (fillers and samples "
        "differ), so it shows the layers working; the real within-source test shares "
        "sources (not groups) with training; the by-source rows are the closest to "
        "independent data here. The reserved evaluation suites are never used.",
    ]
    write_section("safety", "Memory-write safety: catalogue, detector, combined", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
