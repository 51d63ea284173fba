"""Invisible characters that scripts need (issue 27): refusals before and after.

Before is the rule as it was (any listed invisible character refuses the
write), after is the current catalogue, which lets a zero-width (non-)joiner
or space stand where the script around it needs it. Both run in this process
on the same texts.

- Benign: Tatoeba sentences of the languages that write with these characters,
  **dev split only** (``bench/detector_data.py``; fetch first), refused by the
  invisible rule and by the whole ``strict`` catalogue.
- Attacks: the generated corpus (``bench/safety_corpus.py``) train and dev
  splits, the attacks holding an invisible character as generated, and every
  attack again with U+200B, U+200C or U+200D inserted after 30 % of its
  characters (the corpus's own ``zerowidth`` obfuscation, all three
  characters), stopped by the catalogue.

Run ``python bench/bench_invisible_scripts.py``.
"""

from __future__ import annotations

import itertools
import os
import platform
import random
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(__file__))

import detector_data
import safety_corpus
from hermes_memory_builtin.threats import (
    INVISIBLE_CHARS,
    MAX_SCAN_CHARS,
    first_threat_message,
    folded_text,
    hidden_characters,
    scan_for_threats,
)

LANGUAGES = ("khm", "mal", "pes", "mar", "tel", "bn", "hi", "ta", "th", "ar", "ur", "urd")
"""Tatoeba languages written with zero-width joiners or spaces (those present are shown)."""
CJK = ("cmn", "jpn", "yue", "wuu", "ja", "zh", "ko", "kor")
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d")


def invisible_before(text: str) -> bool:
    """The rule as it was: any listed invisible character refuses."""
    return not INVISIBLE_CHARS.isdisjoint(text[:MAX_SCAN_CHARS])


def invisible_after(text: str) -> bool:
    """The rule now: an invisible character the script does not need refuses."""
    return bool(hidden_characters(text[:MAX_SCAN_CHARS]))


def catalogue_before(text: str) -> bool:
    """The whole strict catalogue with the old invisible rule."""
    if invisible_before(text):
        return True
    return first_threat_message(text) is not None


def catalogue_after(text: str) -> bool:
    """The whole strict catalogue as it is."""
    return first_threat_message(text) is not None


def _rate(check: Callable[[str], bool], texts: list[str]) -> str:
    hits = sum(check(text) for text in texts)
    return f"{hits}/{len(texts)} ({100 * hits / max(len(texts), 1):.1f} %)"


def _inserted(text: str, rng: random.Random) -> str:
    return "".join(c + (rng.choice(ZERO_WIDTH) if rng.random() < 0.3 else "") for c in text)


def _joined(text: str) -> str:
    out = [text[0]] if text else []
    for before, char in itertools.pairwise(text):
        if before.isalpha() and char.isalpha() and not before.isascii() and not char.isascii():
            out.append("\u200c")
        out.append(char)
    return "".join(out)


def benign_table() -> None:
    by_language: dict[str, list[str]] = {}
    for row in detector_data.fetched_texts():
        if row.source == "Tatoeba" and row.split == "dev" and row.label == 0:
            by_language.setdefault(row.language, []).append(row.text)
    print(
        "| Tatoeba dev (benign) | sentences | invisible rule before | after "
        "| catalogue before | after |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for language in (*LANGUAGES, *CJK):
        texts = by_language.get(language)
        if not texts:
            continue
        print(
            f"| {language} | {len(texts)} | {_rate(invisible_before, texts)} "
            f"| {_rate(invisible_after, texts)} | {_rate(catalogue_before, texts)} "
            f"| {_rate(catalogue_after, texts)} |"
        )
    every = [text for texts in by_language.values() for text in texts]
    print(
        f"| all {len(by_language)} languages | {len(every)} | {_rate(invisible_before, every)} "
        f"| {_rate(invisible_after, every)} | {_rate(catalogue_before, every)} "
        f"| {_rate(catalogue_after, every)} |"
    )


def attack_table() -> None:
    attacks = [
        sample
        for sample in safety_corpus.generate()
        if sample.label == 1 and sample.split in ("train", "dev")
    ]
    generated = [s.text for s in attacks if not INVISIBLE_CHARS.isdisjoint(s.text)]
    rng = random.Random(27)
    inserted = [_inserted(s.text, rng) for s in attacks]
    print("\n| generated attacks (train+dev) | texts | stopped before | after |")
    print("|---|---:|---:|---:|")
    print(
        f"| with an invisible character as generated | {len(generated)} "
        f"| {_rate(catalogue_before, generated)} | {_rate(catalogue_after, generated)} |"
    )
    for language in ("all", "ar", "hi", "zh", "ja", "ru"):
        texts = [
            text
            for sample, text in zip(attacks, inserted, strict=True)
            if language in ("all", sample.language)
        ]
        print(
            f"| U+200B/C/D inserted, {language} | {len(texts)} "
            f"| {_rate(catalogue_before, texts)} | {_rate(catalogue_after, texts)} |"
        )
    # The allowance used on purpose: a non-joiner between every two letters of an Arabic or
    # Devanagari attack. The scan drops it, so such a text is stopped exactly when its plain
    # form is; the joiners buy the attacker nothing.
    for language in ("ar", "hi"):
        plain = [s.text for s in attacks if s.language == language]
        joined = [_joined(text) for text in plain]
        print(
            f"| U+200C between every two letters, {language} | {len(joined)} "
            f"| {_rate(catalogue_before, joined)} | {_rate(catalogue_after, joined)} |"
            f" (plain: {_rate(catalogue_after, plain)})"
        )
        same = sum(folded_text(a) == folded_text(b) for a, b in zip(joined, plain, strict=True))
        print(f"  detector input (folded_text) identical to the plain form: {same}/{len(plain)}")
    start = time.perf_counter()
    for text in inserted:
        scan_for_threats(text, scope="strict")
    per_entry = (time.perf_counter() - start) / len(inserted) * 1e3
    print(f"\nscan of an attack with inserted characters: {per_entry:.3f} ms/entry")


def main() -> None:
    load = os.getloadavg()[0]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {load:.2f}, "
        f"Python {platform.python_version()}"
    )
    detector_data.verify()
    wall = time.perf_counter()
    benign_table()
    attack_table()
    print(f"wall: {time.perf_counter() - wall:.1f} s")


if __name__ == "__main__":
    main()
