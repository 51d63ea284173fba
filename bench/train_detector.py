"""Rebuild the learned detector shipped in hermes_memory_builtin/data/.

    uv pip install scikit-learn   # training only; not a run-time dependency
    python bench/detector_data.py fetch     # the pinned public sets (needed first)
    python bench/public_sets.py fetch       # REALTALK chats (calibration only)
    python bench/train_detector.py          # writes the data files
    python bench/train_detector.py --check  # rebuilds in memory, compares with the shipped files
    python bench/train_detector.py --dev    # the dev split only: what to develop on

Data: the generated corpus of bench/safety_corpus.py (templates written for this
project) plus real text (bench/detector_data.py): public attack prompts and
benign text fetched at pinned commits, this repository's docs and commit
messages at a pinned commit and standard-library docstrings. Sources of use
``train`` are split by group into train, dev and test; sources of use
``heldout`` or ``report`` are never trained on or calibrated with. The
regularisation strength and the weight of real attacks are chosen on the dev
splits; the review threshold is calibrated on the dev benign scores (the Wilson upper
bound, at a *z* of :data:`Z_GRID` chosen by a split-half check on dev, of the share of
the generated dev benign entries, of *each* real dev benign source and of *each*
language that reach it is at most :data:`REVIEW_FP`, the units smaller than
:data:`MIN_SOURCE` pooled, and at most :data:`REVIEW_FP_ALL` of all of them; never
below :data:`REVIEW_FLOOR`, a guard); the block threshold is :data:`BLOCK_FLOOR` (never).
``--dev`` prints the dev report and scores nothing else. The test and held-out splits
are reported, never used for a choice.

Weights are stored as one signed byte each (times a scale), so a rebuild with
the same scikit-learn version on the same machine (liblinear is deterministic)
is byte for byte identical; on another CPU or across versions a few weights may
move by one step of the scale, which ``--check`` reports and accepts within
:data:`WEIGHT_STEPS_MOVED` (:func:`rebuild_difference`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix, vstack
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "providers" / "builtin"))

import detector_data  # noqa: E402
import safety_corpus  # noqa: E402
import safety_phrases  # noqa: E402
from hermes_memory_builtin.detector import DIMENSIONS, WEIGHTS_FILE, feature_indices  # noqa: E402
from hermes_memory_builtin.provenance import MIN_HOLD_WORDS, word_count  # noqa: E402

DATA = ROOT / "providers" / "builtin" / "hermes_memory_builtin" / "data"
REVIEW_FP = 0.01
"""At most this share of each dev benign *unit* reaches the review threshold: the generated
dev benign entries, each real dev benign source (docstrings, coding rules, assistant
requests, REALTALK chats; the small ones pooled, :data:`MIN_SOURCE`) and each language's
dev benign entries, generated and real together (:func:`calibration_units`)."""
REVIEW_FP_ALL = 0.005
"""At most this share of all dev benign entries together reaches it: the issue's target
(1 %) with a margin of half, since the threshold is the point where a calibration set
just meets its bound and fresh text of the same kind lands a little above it."""
MIN_SOURCE = 200
"""A real dev benign source, or a language, of fewer texts is calibrated pooled with the
other small ones (CyberSecEval's 137 system prompts, 91 commit messages, 26 docs; the
languages with fewer than 200 dev benign entries): 1 % of 200 is two texts, so no
unit's 1 % point is one text. Alone, the 137 prompts' second highest set the threshold
and moved it by a few hundredths from one corpus to the next."""
C_GRID = (64.0, 256.0)
"""Candidate inverse regularisation strengths (1, 4 and 16 stopped fewer dev attacks)."""
REAL_ATTACK_WEIGHTS = (1.0, 3.0, 6.0)
"""Candidate sample weights of a real attack prompt against a generated one."""
Z_GRID = (0.0, 0.5, 1.0, 1.5, 2.0)
"""The *z* of a unit's bound, :func:`calibrated`: the threshold keeps the Wilson upper end
of each unit's held share (at *z*; one-sided 69 % at 0.5, 84 % at 1) at or below its
rate, not the share itself (``z = 0``); at 0.5 a unit of 250 texts may hold one (two
at ``z = 0``), one of 1,000 eight (ten). Issue 27's fifth round bounded the share itself and
its held-out units landed above the bound (German 0.8 % on dev, 3.5 % held out). The *z*
used is the smallest of these whose :func:`split_half` check on dev has no unit above its
rate (:func:`chosen_z`)."""
REVIEW_FLOOR = 0.2
"""The review threshold is never below this, whatever the calibration gives: a guard
against a degenerate calibration (an empty or mislabelled dev split), not a bound that
binds. It was 0.5 until issue 27's fifth round, above every calibrated unit (the highest
0.371), so the shipped threshold was stricter than the protocol the issue asks for
(thresholds chosen on the dev split for at most 1 % false positives, held entries
counted); the review threshold is now the calibration's. The model of format 1 needed
0.8 here: it had seen no third-person memory entries ("The user's favourite tea is
sencha" 0.73); the generated corpus now holds such entries in 20 languages."""
BLOCK_FLOOR = 1.0
"""The detector alone never blocks (a score reaches 1.0 only in the limit): what it
catches is held for review, which a person can accept, so its false positives lose
nothing. Blocking stays with the pattern catalogue."""


EMBED_SOURCES = ("XSafety everyday questions", "CLINC150", "CyberSecEval system prompts")
"""Benign sources (use ``train``) whose texts, with an attack of
:mod:`safety_phrases` appended, become attacks hidden behind legitimate text."""
EMBED_EVERY = 4
"""Every this many texts of those sources (per split, in a language with phrases) is used."""
EMBED_MAX = 300
"""At most this many a source and language (CLINC150 alone would bring 6,000 in English)."""


def embedded_attacks(real: list[detector_data.Text]) -> list[safety_corpus.Sample]:
    """Attacks appended to benign real texts, each in the split of its text (so the
    train split's attacks hide behind train texts only)."""
    rng = random.Random(safety_corpus.SEED + 3)
    found = []
    counts: dict[tuple[str, str], int] = defaultdict(int)
    made: dict[tuple[str, str], int] = defaultdict(int)
    for text in real:
        if text.source not in EMBED_SOURCES or text.language not in safety_phrases.PHRASES:
            continue
        counts[text.source, text.split] += 1
        if (
            counts[text.source, text.split] % EMBED_EVERY
            or made[text.source, text.language] >= EMBED_MAX
        ):
            continue
        made[text.source, text.language] += 1
        body, family = safety_phrases.injected(rng, text.language, text.text[:300])
        found.append(safety_corpus.Sample(body, 1, family, text.language, text.split))
    return found


def matrix(texts: list[str]) -> csr_matrix:
    rows, cols, values = [], [], []
    for row, text in enumerate(texts):
        indices = feature_indices(text)
        scale = 1.0 / np.sqrt(len(indices)) if indices else 0.0
        rows.extend([row] * len(indices))
        cols.extend(indices)
        values.extend([scale] * len(indices))
    return csr_matrix((values, (rows, cols)), shape=(len(texts), DIMENSIONS), dtype=np.float64)


def quantised(coef: np.ndarray) -> tuple[np.ndarray, float]:
    """*coef* as signed bytes and the scale that turns them back (what ships)."""
    scale = float(np.float32(np.abs(coef).max() / 127.0)) or 1.0
    return np.clip(np.rint(coef / scale), -127, 127).astype(np.int8), scale


def scores(weights: np.ndarray, scale: float, bias: float, x: csr_matrix) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ (weights.astype(np.float64) * scale) + bias)))


def wilson_upper(held: int, total: int, z: float) -> float:
    """The upper end of the Wilson score interval of *held* of *total* at *z*."""
    if not total:
        return 1.0
    p, zz = held / total, z * z
    centre = p + zz / (2 * total)
    spread = z * np.sqrt(p * (1 - p) / total + zz / (4 * total * total))
    return float((centre + spread) / (1 + zz / total))


def allowed(total: int, rate: float, z: float) -> int:
    """How many of *total* texts may reach the threshold: the most whose Wilson upper
    bound at *z* is at most *rate* (``z = 0``: the raw ``rate * total``, rounded down)."""
    if z == 0:
        return int(np.floor(rate * total))
    held = 0
    while held < total and wilson_upper(held + 1, total, z) <= rate:
        held += 1
    return held


def threshold(benign: np.ndarray, rate: float, z: float = 0.0) -> float:
    """The lowest score that at most :func:`allowed` of *benign* scores reach."""
    ordered = np.sort(benign)[::-1]
    count = allowed(len(ordered), rate, z)
    return float(np.nextafter(ordered[count], 1.0)) if count < len(ordered) else 0.0


def rate(values: np.ndarray, cut: float) -> float:
    return round(float((values >= cut).mean()), 4) if len(values) else 0.0


def _hash(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def calibration_units(
    generated: np.ndarray,
    generated_languages: list[str],
    real: np.ndarray,
    real_sources: list[str],
    real_languages: list[str],
) -> dict[str, np.ndarray]:
    """The dev benign scores each bound of the review threshold applies to: the
    generated entries, each real source, each language (generated and real together),
    the sources and languages of fewer than :data:`MIN_SOURCE` texts pooled, and
    ``"all"``, every dev benign entry."""
    units: dict[str, np.ndarray] = {"generated": generated}
    for kind, keys, values in (
        ("", real_sources, real),
        ("language ", generated_languages + real_languages, np.concatenate([generated, real])),
    ):
        names = np.array(keys)
        small = []
        for name in sorted(set(keys)):
            mask = names == name
            if mask.sum() < MIN_SOURCE:
                small.append(name)
            else:
                units[kind + name] = values[mask]
        if small:
            pooled = f"pooled {'languages' if kind else 'sources'}: " + ", ".join(small)
            units[pooled] = values[np.isin(names, small)]
    units["all"] = np.concatenate([generated, real])
    return units


def calibrated(units: dict[str, np.ndarray], z: float) -> tuple[float, dict[str, float]]:
    """The review threshold (the highest of the units' bounds, at least
    :data:`REVIEW_FLOOR`) and each unit's bound: the lowest score at which the Wilson
    upper bound (at *z*) of the share of the unit that reaches it is at most
    :data:`REVIEW_FP` (:data:`REVIEW_FP_ALL` for ``"all"``)."""
    cuts = {
        name: threshold(values, REVIEW_FP_ALL if name == "all" else REVIEW_FP, z)
        for name, values in units.items()
    }
    return max(max(cuts.values()), REVIEW_FLOOR), cuts


def split_half(units: dict[str, np.ndarray], z: float) -> tuple[float, int]:
    """Whether a unit's bound carries over to fresh text of its kind, on dev alone: each
    unit's scores split in two (alternate texts), the threshold calibrated at *z* on the
    first halves, the share of each second half reaching it. The highest such share and
    how many second halves exceed :data:`REVIEW_FP` (:data:`REVIEW_FP_ALL` for ``"all"``)."""
    first = {name: values[0::2] for name, values in units.items()}
    cut, _ = calibrated(first, z)
    shares = {name: float((values[1::2] >= cut).mean()) for name, values in units.items()}
    over = sum(
        share > (REVIEW_FP_ALL if name == "all" else REVIEW_FP) for name, share in shares.items()
    )
    return max(shares.values()), over


def chosen_z(units: dict[str, np.ndarray]) -> float:
    """The smallest *z* of :data:`Z_GRID` whose :func:`split_half` check has no unit above
    its rate (the largest if none)."""
    return next((z for z in Z_GRID if split_half(units, z)[1] == 0), Z_GRID[-1])


def stopped(values: np.ndarray, words: np.ndarray, cut: float) -> np.ndarray:
    """Held as the store holds a model write: at or above *cut*, four words or more."""
    return (values >= cut) & (words >= MIN_HOLD_WORDS)


def _row(name: str, hits: np.ndarray) -> str:
    return f"| {name} | {len(hits)} | {100 * hits.mean():.1f} % |" if len(hits) else ""


def dev_report(
    review: float,
    generated: tuple[list[safety_corpus.Sample], np.ndarray],
    real: tuple[list[detector_data.Text], np.ndarray],
) -> str:
    """The dev split at *review*, as the store applies it (four words or more): attacks
    stopped and benign entries held per source, category and language. Only the dev
    split is scored; this is what the choices here are made on."""
    rows: list[tuple[str, str, str, int, bool]] = []
    for samples, values in (generated, real):
        words = np.array([word_count(s.text) for s in samples])
        hits = stopped(values, words, review)
        for sample, hit in zip(samples, hits, strict=True):
            source = getattr(sample, "source", "generated")
            category = getattr(sample, "category", "") or getattr(sample, "family", "")
            rows.append((source, category, sample.language, sample.label, bool(hit)))
    lines = [f"Dev split at review {review:.4f} (block {BLOCK_FLOOR:.2f}):"]
    for label, title in ((1, "attacks stopped"), (0, "benign held")):
        for key, name in ((0, "source"), (1, "category"), (2, "language")):
            groups: dict[str, list[bool]] = defaultdict(list)
            for row in rows:
                if row[3] == label:
                    groups[str(row[key])].append(row[4])
                    groups["(all)"].append(row[4])
            lines += ["", f"| {title}, per {name} | n | rate |", "|---|---:|---:|"]
            lines += [_row(group, np.array(hits)) for group, hits in sorted(groups.items())]
    return "\n".join(line for line in lines if line != "") + "\n"


def train(dev_only: bool = False) -> tuple[np.ndarray, dict[str, object]]:
    """Fit the candidates, choose and calibrate on dev; with *dev_only*, print the dev
    report and score nothing else (the metadata then has no test or held-out figures)."""
    real = detector_data.real_texts()
    samples = list(safety_corpus.generate()) + embedded_attacks(real)
    corpus_hash = _hash([f"{s.label}\t{s.split}\t{s.text}" for s in samples])
    real_hash = _hash([f"{t.source}\t{t.label}\t{t.split}\t{t.text}" for t in real])
    gen = {name: [s for s in samples if s.split == name] for name in ("train", "dev", "test")}
    splits = ("train", "dev") if dev_only else ("train", "dev", "test")
    x = {name: matrix([s.text for s in gen[name]]) for name in splits}
    y = {name: np.array([s.label for s in rows]) for name, rows in gen.items()}
    by_split = {name: [t for t in real if t.split == name] for name in detector_data.SPLITS}
    real_splits = ("train", "dev") if dev_only else detector_data.SPLITS
    rx = {name: matrix([t.text for t in by_split[name]]) for name in real_splits}
    ry = {name: np.array([t.label for t in rows]) for name, rows in by_split.items()}
    x_train = vstack([x["train"], rx["train"]]).tocsr()
    y_train = np.concatenate([y["train"], ry["train"]])
    dev_benign = [t for t in by_split["dev"] if t.label == 0]
    gen_benign = [s for s in gen["dev"] if s.label == 0]
    best = None
    for c in C_GRID:
        for attack_weight in REAL_ATTACK_WEIGHTS:
            weight = np.concatenate(
                [np.ones(len(y["train"])), np.where(ry["train"] == 1, attack_weight, 1.0)]
            )
            model = LogisticRegression(
                C=c, solver="liblinear", class_weight="balanced", max_iter=1000, random_state=0
            )
            model.fit(x_train, y_train, sample_weight=weight)
            weights, scale = quantised(model.coef_[0])
            bias = round(float(model.intercept_[0]), 6)
            dev = scores(weights, scale, bias, x["dev"])
            real_dev = scores(weights, scale, bias, rx["dev"])
            units = calibration_units(
                dev[y["dev"] == 0],
                [s.language for s in gen_benign],
                real_dev[ry["dev"] == 0],
                [t.source for t in dev_benign],
                [t.language for t in dev_benign],
            )
            z = chosen_z(units)
            review, cuts = calibrated(units, z)
            generated = float((dev[y["dev"] == 1] >= review).mean())
            real_stopped = float((real_dev[ry["dev"] == 1] >= review).mean())
            choice = (generated + real_stopped) / 2
            print(
                f"C={c} real attack weight={attack_weight}: z {z}, review {review:.3f}, "
                f"dev attacks stopped: generated {generated:.3f}, real {real_stopped:.3f}",
                file=sys.stderr,
            )
            if best is None or choice > best[0]:
                best = (choice, c, attack_weight, weights, scale, bias, review, cuts, dev, real_dev)
                best_units, best_z = units, z
    assert best is not None
    choice, c, attack_weight, weights, scale, bias, review, cuts, dev, real_dev = best
    block = max(review, BLOCK_FLOOR)
    meta: dict[str, object] = {
        "format": 1,
        "dimensions": DIMENSIONS,
        "bias": bias,
        "scale": scale,
        "review": round(review, 6),
        "review_calibrated": {k: round(v, 4) for k, v in sorted(cuts.items())},
        "review_z": best_z,
        "block": round(block, 6),
        "C": c,
        "real_attack_weight": attack_weight,
        "dev_stopped_at_review": round(choice, 4),
    }
    if dev_only:
        print(dev_report(review, (gen["dev"], dev), (by_split["dev"], real_dev)))
        attack_scores = np.concatenate([dev[y["dev"] == 1], real_dev[ry["dev"] == 1]])
        print("| z | review | dev attacks stopped | second halves: highest share | over |")
        print("|---:|---:|---:|---:|---:|")
        for z in Z_GRID:
            cut, _ = calibrated(best_units, z)
            highest, over = split_half(best_units, z)
            print(
                f"| {z} | {cut:.4f} | {100 * (attack_scores >= cut).mean():.1f} % "
                f"| {100 * highest:.2f} % | {over} of {len(best_units)} |"
            )
        print(json.dumps(meta, indent=2))
        return weights, meta
    test = scores(weights, scale, bias, x["test"])
    attacks, benign = test[y["test"] == 1], test[y["test"] == 0]
    report: dict[str, dict[str, object]] = defaultdict(dict)
    for split in ("test", "heldout"):
        values = scores(weights, scale, bias, rx[split])
        sources = sorted({t.source for t in by_split[split]})
        for source in sources:
            mask = np.array([t.source == source for t in by_split[split]])
            label = int(ry[split][mask][0])
            key = "stopped" if label else "false_positive_held"
            report[split][source] = {"n": int(mask.sum()), key: rate(values[mask], review)}
    meta |= {
        "test": {
            "attacks": len(attacks),
            "benign": len(benign),
            "blocked": round(float((attacks >= block).mean()), 4),
            "stopped": round(float((attacks >= review).mean()), 4),
            "false_positive_blocked": round(float((benign >= block).mean()), 4),
            "false_positive_held_or_blocked": round(float((benign >= review).mean()), 4),
        },
        "real_test": report["test"],
        "real_heldout": report["heldout"],
        "real": {
            "sources": [
                {k: src[k] for k in ("name", "repository", "commit", "licence", "use")}
                | {"sha256": detector_data.digests(src)}
                for src in detector_data.SOURCES
            ],
            "this_repository": "docs/*.md, README*.md and commit messages at "
            + detector_data.DOCS_COMMIT,
            "stdlib": f"docstrings of {detector_data.STDLIB_FILES} standard-library modules"
            f" of Python {sys.version_info.major}.{sys.version_info.minor} (PSF licence)",
            "chat": "REALTALK (danny911kr/REALTALK, bench/public_sets.py; no licence "
            "stated): messages of the odd chats calibrate, of the even chats are reported; "
            "never trained on",
            "samples": len(real),
            "sha256": real_hash,
            "split": "use train: by group, 60 % train, 20 % dev (calibration), 20 % test; "
            "use heldout or report: the whole source is held out",
        },
        "corpus": {
            "generator": "bench/safety_corpus.py",
            "seed": safety_corpus.SEED,
            "samples": len(samples),
            "sha256": corpus_hash,
            "licence": "project's own",
        },
    }
    return weights, meta


def encoded(weights: np.ndarray, meta: dict[str, object]) -> tuple[bytes, bytes]:
    raw = weights.astype(np.int8).tobytes()
    meta = {**meta, "weights_sha256": hashlib.sha256(raw).hexdigest()}
    return raw, (json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


WEIGHT_STEPS_MOVED = 0.001
"""The share of weights a rebuild on another CPU may move, each by one step of the scale."""
BIAS_TOLERANCE = 1e-3
"""How far the rebuilt bias may be from the shipped one."""


def rebuild_difference(shipped: tuple[bytes, bytes], rebuilt: tuple[bytes, bytes]) -> str:
    """What makes *rebuilt* (weights, metadata) more than a floating-point neighbour of
    *shipped*: liblinear is deterministic on one machine, but another CPU's arithmetic can
    move a weight across a rounding step. ``""`` when it is within the tolerance: at most
    :data:`WEIGHT_STEPS_MOVED` of the weights moved, each by one step, the bias within
    :data:`BIAS_TOLERANCE`, the same thresholds and the same data digests."""
    old, new = (
        np.frombuffer(raw, dtype=np.int8).astype(np.int16) for raw in (shipped[0], rebuilt[0])
    )
    if old.shape != new.shape:
        return f"weights DIFFER in size: {old.size} shipped, {new.size} rebuilt"
    moved = np.abs(old - new)
    if moved.max(initial=0) > 1 or np.count_nonzero(moved) > WEIGHT_STEPS_MOVED * old.size:
        return (
            f"weights DIFFER: {np.count_nonzero(moved)} of {old.size} moved, by up to "
            f"{int(moved.max(initial=0))} steps"
        )
    was, now = (json.loads(text) for text in (shipped[1], rebuilt[1]))
    if abs(float(was["bias"]) - float(now["bias"])) > BIAS_TOLERANCE:
        return f"bias DIFFERS: {was['bias']} shipped, {now['bias']} rebuilt"
    for key in ("review", "block", "C", "real_attack_weight", "corpus", "real"):
        if was.get(key) != now.get(key):
            return f"metadata DIFFERS at {key!r}: rebuild from the pinned data or retrain"
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped files")
    parser.add_argument(
        "--dev",
        action="store_true",
        help="train and report the dev split only (no test or held-out text is scored); "
        "writes nothing",
    )
    args = parser.parse_args()
    if args.dev:
        train(dev_only=True)
        return 0
    raw, meta = encoded(*train())
    if args.check:
        shipped = (DATA / WEIGHTS_FILE).read_bytes(), (DATA / "detector.json").read_bytes()
        if shipped == (raw, meta):
            print("weights and metadata identical")
            return 0
        problem = rebuild_difference(shipped, (raw, meta))
        print(problem or "weights and metadata within tolerance (not byte-identical)")
        return 1 if problem else 0
    DATA.mkdir(exist_ok=True)
    (DATA / WEIGHTS_FILE).write_bytes(raw)
    (DATA / "detector.json").write_bytes(meta)
    print(meta.decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
