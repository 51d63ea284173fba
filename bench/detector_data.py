"""Real text for the learned detector: public attack prompts and benign text, all pinned.

Every source is a public repository at a pinned commit, with its licence and the
SHA-256 of what is read. ``python bench/detector_data.py fetch`` copies the
pinned files into ``bench/data/detector/`` (ignored by git; nothing of them is
committed). Benign text of this repository (docs and READMEs, commit messages)
is read with ``git show`` at :data:`DOCS_COMMIT`, so later edits do not move
the training set; the standard library's docstrings (PSF licence) come from
the running interpreter.

Each source has a *use*:

- ``train``: its texts are split into train (60 %), dev (20 %, calibration)
  and test (20 %, reported only) by a hash of a *group* (a source file, an
  attack technique, an intent, a goal), so no group is on two sides;
- ``heldout``: the whole source is test data, never trained on or calibrated
  with (the split "by source");
- ``report``: a source without a licence that allows training (Tensor Trust,
  REALTALK): measured only; REALTALK's odd chats calibrate, its even chats
  are reported.

Not used, ever (kept for independent evaluation): garak, spikee, BIPIA,
AgentDojo, LoCoMo, PersonaChat, XPersona, awesome-cursorrules,
everything-claude-code; nor GPL sources (promptmap).

Usage::

    python bench/detector_data.py fetch [--from NAME=GITDIR ...]
    python bench/detector_data.py verify
"""

# ruff: noqa: E501 (pinned digests)
from __future__ import annotations

import argparse
import ast
import csv
import fnmatch
import gzip
import hashlib
import io
import json
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data" / "detector"

DOCS_COMMIT = "d869c8a"
"""The commit of this repository whose docs, READMEs and commit messages are benign text."""

SPLITS = ("train", "dev", "test", "heldout")


@dataclass(frozen=True)
class Text:
    """One real text: its *source*, *split*, *label* (1 attack), *category*, *language*."""

    source: str
    split: str
    label: int
    text: str
    category: str
    language: str = "en"


SOURCES: list[dict[str, object]] = [
    {
        "name": "GPTFuzz",
        "repository": "https://github.com/sherdencooper/GPTFuzz",
        "commit": "1eddeb565740ae311b5f4950492b011a6f866fe7",
        "licence": "MIT",
        "label": 1,
        "use": "train",
        "reader": "gptfuzz",
        "files": {
            "datasets/prompts/GPTFuzzer.csv": (
                "e4abf25343b4adb991dd8ddc6189c038f26a6e74064d792cced69f56f71577fc"
            ),
        },
    },
    {
        "name": "Prompt-Injection-Everywhere",
        "repository": "https://github.com/TakSec/Prompt-Injection-Everywhere",
        "commit": "9b69c8ae7958f68d562d484103a7b14b66983d63",
        "licence": "MIT",
        "label": 1,
        "use": "train",
        "reader": "whole_file",
        "files": {
            "Basic-Prompt-Injection-v1.txt": (
                "03e1a48a3b9511c96fe854e5e340cf18122952cc1fcba91937f9a55793dd253e"
            ),
            "Basic-Prompt-Injection-v2.txt": (
                "b1b6882282f14eb4239e49433e47090beaf024a7152893832a98057e93c7c68a"
            ),
            "Prompt-Injection-SQLi.txt": (
                "6db4521f66439db49f8f58207b195d4da9b6f20eacbb1ddb7208acade0bc62af"
            ),
            "Prompt-Injection-XSS.txt": (
                "5240dafa59f3c53357c9d6b6c12eb02495f516a05eb16291d94ae26207e6eb80"
            ),
            "Prompt-Leak-v1.txt": (
                "bf5eb249c8b68481bb0e6663d9b84e9abd336f8e6f2e71b4cdc85036f5ee7e75"
            ),
            "Prompt-Leak-v2.txt": (
                "a116583a2ed00458ca8e3fb23e1141983c3105027fde418978418a25c176c5c6"
            ),
        },
    },
    {
        "name": "CyberSecEval",
        "repository": "https://github.com/meta-llama/PurpleLlama",
        "commit": "4be64c3a24442b51c76175e6ec67722cc3f5fe38",
        "licence": "MIT (CybersecurityBenchmarks/LICENSE)",
        "label": 1,
        "use": "train",
        "reader": "cyberseceval",
        "files": {
            "CybersecurityBenchmarks/datasets/prompt_injection/prompt_injection.json": (
                "069e4d5d36f6d19f972a3bbc65df840cc729354f89358a9031aeb44d95b18a9a"
            ),
            "CybersecurityBenchmarks/datasets/prompt_injection/"
            "prompt_injection_multilingual_machine_translated.json": "f018adfc7b1f766f98ce4dd4c8e34e97a8a88f402a2b63576652027e02c2a15f",
        },
    },
    {
        "name": "CyberSecEval system prompts",
        "repository": "https://github.com/meta-llama/PurpleLlama",
        "commit": "4be64c3a24442b51c76175e6ec67722cc3f5fe38",
        "licence": "MIT (CybersecurityBenchmarks/LICENSE)",
        "label": 0,
        "use": "train",
        "reader": "cyberseceval_system",
        "category": "system_prompts",
        "files": {
            "CybersecurityBenchmarks/datasets/prompt_injection/prompt_injection.json": (
                "069e4d5d36f6d19f972a3bbc65df840cc729354f89358a9031aeb44d95b18a9a"
            ),
            "CybersecurityBenchmarks/datasets/prompt_injection/"
            "prompt_injection_multilingual_machine_translated.json": "f018adfc7b1f766f98ce4dd4c8e34e97a8a88f402a2b63576652027e02c2a15f",
        },
    },
    {
        "name": "JailbreakBench",
        "repository": "https://github.com/JailbreakBench/artifacts",
        "commit": "909e68c01d94222b8ad2e397a017e2e12e2adb73",
        "licence": "MIT",
        "label": 1,
        "use": "train",
        "reader": "jailbreaks",
        "globs": {
            "attack-artifacts/PAIR/black_box/*.json": "5c619bb1af045fe95698e0a30e6a837d8435ada31b234ad5ad2c16af04db1920",
            "attack-artifacts/JBC/manual/*.json": "c80e36435922e7560c44df70d844ec98cee83cb2eee7b8b9d53e0292f072ff50",
            "attack-artifacts/GCG/*/*.json": "7bda26a2d74df4835749c675f707ab2c3c7e71755f51ce64bd5bbb9b3b41afd9",
        },
    },
    {
        "name": "llm-adaptive-attacks",
        "repository": "https://github.com/tml-epfl/llm-adaptive-attacks",
        "commit": "7787faaf8b6fdd56e63ec320d5568bd3e35c48c0",
        "licence": "MIT",
        "label": 1,
        "use": "heldout",
        "reader": "jailbreaks",
        "globs": {
            "jailbreak_artifacts/exps_*.json": "d5ec9304c6f56a4db94ffc4ad27d54cc97ba513b308833b394e8b8ff3390da8d"
        },
    },
    {
        "name": "Tensor Trust",
        "repository": "https://github.com/HumanCompatibleAI/tensor-trust-data",
        "commit": "e2385ea9cf448c9641b96e2e39f113ed4979a5b0",
        "licence": "none stated (no LICENSE file at this commit): measured, never trained on",
        "label": 1,
        "use": "report",
        "reader": "tensor_trust",
        "files": {
            "benchmarks/hijacking-robustness/v1/hijacking_robustness_dataset.jsonl": "2ad3c2343bbf43cb1924f3ec5d6f830864ce3c879e9832b01d93a991e7e2e680",
            "benchmarks/extraction-robustness/v1/extraction_robustness_dataset.jsonl": (
                "4090f9f57b6df69cc32d7669ac991e3fd53e6e2bb616a5e6f45dac79c183ee4c"
            ),
        },
    },
    {
        "name": "awesome-copilot instructions",
        "repository": "https://github.com/github/awesome-copilot",
        "commit": "ab7544d03d4c49fdd07f5958e1888ad39c4118e2",
        "licence": "MIT",
        "label": 0,
        "use": "train",
        "reader": "markdown",
        "category": "coding_rules",
        "globs": {
            "instructions/*.instructions.md": "e1c3b128aa21283da506d54643c04c4cf1e56792722a3b98476789f7d9682201"
        },
    },
    {
        "name": "awesome-copilot agents",
        "repository": "https://github.com/github/awesome-copilot",
        "commit": "ab7544d03d4c49fdd07f5958e1888ad39c4118e2",
        "licence": "MIT",
        "label": 0,
        "use": "heldout",
        "reader": "markdown",
        "category": "agent_personas",
        "globs": {
            "agents/*.agent.md": "ce48e4a1a745dfda9b5bc34fe36b562d88ac598eaf2f1d1578155f4a7f48507d"
        },
    },
    {
        "name": "hh-rlhf assistant turns",
        "repository": "https://github.com/anthropics/hh-rlhf",
        "commit": "354e5c3cb8960630860dd5774a6ac2a58313bf4d",
        "licence": "MIT",
        "label": 0,
        "use": "train",
        "reader": "hh_rlhf",
        "category": "assistant_chat",
        "files": {
            "harmless-base/test.jsonl.gz": (
                "ebfaaed21162a4de120ae85366075b34425e2a6303fac59b99555002f7016f03"
            )
        },
    },
    {
        "name": "CLINC150",
        "repository": "https://github.com/clinc/oos-eval",
        "commit": "828f8093932c8fe6ca7936c3d2e52903b1c523de",
        "licence": "CC BY 3.0",
        "label": 0,
        "use": "train",
        "reader": "clinc",
        "category": "assistant_requests",
        "files": {
            "data/data_full.json": "36923c3705a59e08fe9c3883d8bc2dd966ef93e22cb78ac41171782a698d56e0"
        },
    },
    {
        "name": "BANKING77",
        "repository": "https://github.com/PolyAI-LDN/task-specific-datasets",
        "commit": "57ec275d8078af65b7731c2a98be812d844a6d6b",
        "licence": "CC BY 4.0",
        "label": 0,
        "use": "heldout",
        "reader": "banking",
        "category": "customer_messages",
        "files": {
            "banking_data/test.csv": "d12d6e3bc4c3103966ae786dc435913c0c563dfa328f5a3646d0e62cfeeb474d"
        },
    },
]
"""Every fetched source; ``files`` pins each file's SHA-256, ``globs`` the SHA-256 of
the sorted list of (path, file SHA-256) lines of the files a pattern matches."""


def split_of(key: str) -> str:
    """train (60 %), dev (20 %) or test (20 %), by a stable hash of *key*."""
    bucket = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 5
    return "train" if bucket < 3 else ("dev" if bucket == 3 else "test")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _target(source: dict[str, object]) -> Path:
    return DATA / str(source["name"]).lower().replace(" ", "-")


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(git_dir), *args], check=True, capture_output=True
    ).stdout


def _glob_digest(paths: dict[str, bytes]) -> str:
    listing = "".join(f"{name}\t{sha256(data)}\n" for name, data in sorted(paths.items()))
    return sha256(listing.encode())


def _local_files(source: dict[str, object], pattern: str) -> dict[str, bytes]:
    root = _target(source)
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and fnmatch.fnmatchcase(str(p.relative_to(root)), pattern)
    }


def fetch(local: dict[str, Path]) -> None:
    """Copy every pinned file out of a clone (cloned here unless *local* names one)."""
    for source in SOURCES:
        with tempfile.TemporaryDirectory() as tmp:
            git_dir = local.get(str(source["name"]))
            if git_dir is None:
                git_dir = Path(tmp) / "clone"
                clone = ["git", "clone", "-q", "--bare", str(source["repository"]), str(git_dir)]
                subprocess.run(clone, check=True)
            commit = str(source["commit"])
            names = list(source.get("files", {}))  # type: ignore[call-overload]
            if source.get("globs"):
                tree = _git(git_dir, "ls-tree", "-r", "--name-only", commit).decode().split("\n")
                for pattern in source["globs"]:  # type: ignore[attr-defined]
                    names += [n for n in tree if fnmatch.fnmatchcase(n, pattern)]
            for name in names:
                path = _target(source) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(_git(git_dir, "show", f"{commit}:{name}"))
    missing = verify()
    if missing:
        raise SystemExit(missing)


def digests(source: dict[str, object]) -> dict[str, str]:
    """The SHA-256 of every pinned file and file set of *source*, as fetched."""
    found = {}
    for name in source.get("files", {}):  # type: ignore[attr-defined]
        path = _target(source) / name
        found[name] = sha256(path.read_bytes()) if path.is_file() else "missing"
    for pattern in source.get("globs", {}):  # type: ignore[attr-defined]
        files = _local_files(source, pattern)
        found[pattern] = _glob_digest(files) if files else "missing"
    return found


def verify() -> str:
    """An empty string if every pinned file is present with its sha256, else what is wrong."""
    for source in SOURCES:
        pinned = {**source.get("files", {}), **source.get("globs", {})}  # type: ignore[dict-item]
        for name, digest in digests(source).items():
            path = _target(source) / name
            if digest == "missing":
                return f"{path} is missing: run `python bench/detector_data.py fetch` first"
            if digest != pinned[name]:
                return f"{path}: sha256 is not the recorded {pinned[name]}; fetch again"
    return ""


def _paragraphs(text: str) -> Iterator[str]:
    for block in text.split("\n\n"):
        block = " ".join(line.strip() for line in block.splitlines()).strip()
        if len(block) >= 12 and not block.startswith(("```", "|", ">>>", "---")):
            yield block[:600]


def _markdown(text: str) -> str:
    """*text* without a leading YAML front matter block."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :]
    return text


Row = tuple[str, str, str, str]
"""(group, text, category, language) as a reader yields it."""


def _read_gptfuzz(name: str, raw: str) -> Iterator[Row]:
    for row in csv.DictReader(io.StringIO(raw)):
        yield f"#{row['id']}", row["text"].strip(), "jailbreak", "en"


def _read_whole_file(name: str, raw: str) -> Iterator[Row]:
    category = "prompt_leak" if "Leak" in name else "prompt_injection"
    yield "", raw.strip(), category, "en"


_LANGUAGES = {
    "English": "en", "Hindi": "hi", "Bengali": "bn", "Turkish": "tr", "Arabic": "ar",
    "Italian": "it", "Spanish": "es", "Vietnamese": "vi", "French": "fr", "Russian": "ru",
    "Filipino/Tagalog": "tl", "Portuguese": "pt", "Japanese": "ja", "Korean": "ko",
    "German": "de", "Chinese": "zh", "Indonesian": "id", "Thai": "th",
}  # fmt: skip


def _read_cyberseceval(name: str, raw: str) -> Iterator[Row]:
    """The injected user inputs; grouped by technique, so a technique (and every
    translation of its prompts) is on one side of the split only. Direct
    "logic-violating" cases are left out: most are plain questions on a topic
    their test's system prompt forbids ("How do I cook an omelette?"), which
    are no attack as a memory entry."""
    for case in json.loads(raw):
        if case["injection_type"] == "indirect":
            category = "indirect_injection"
        elif case["risk_category"] == "security-violating":
            category = "secret_extraction"
        else:
            continue
        language = _LANGUAGES.get(case.get("speaking_language", "English"), "other")
        yield case["injection_variant"], case["user_input"].strip(), category, language


def _read_cyberseceval_system(name: str, raw: str) -> Iterator[Row]:
    """The defended system prompts (personal facts, privacy and topic rules, in 18
    languages): legitimate instructions, grouped like the attacks."""
    for case in json.loads(raw):
        language = _LANGUAGES.get(case.get("speaking_language", "English"), "other")
        yield case["injection_variant"], case["test_case_prompt"].strip(), "", language


def _read_jailbreaks(name: str, raw: str) -> Iterator[Row]:
    """JailbreakBench-shaped artifacts; grouped by goal index across methods and models."""
    for case in json.loads(raw)["jailbreaks"]:
        if case.get("prompt"):
            yield f"goal{case['index']}", str(case["prompt"]).strip(), "jailbreak", "en"


def _read_tensor_trust(name: str, raw: str) -> Iterator[Row]:
    category = "prompt_leak" if "extraction" in name else "instruction_override"
    for line in raw.splitlines():
        if line.strip():
            attack = str(json.loads(line)["attack"]).strip()
            if attack:
                yield "", attack, category, "en"


def _read_markdown(name: str, raw: str) -> Iterator[Row]:
    for paragraph in _paragraphs(_markdown(raw)):
        yield "", paragraph, "", "en"


def _read_hh_rlhf(name: str, raw: str) -> Iterator[Row]:
    """The assistant turns of the chosen conversations; grouped by conversation."""
    for number, line in enumerate(raw.splitlines()):
        if line.strip():
            for turn in json.loads(line)["chosen"].split("\n\nAssistant: ")[1:]:
                yield f"#{number}", turn.split("\n\nHuman: ")[0].strip()[:600], "", "en"


def _read_clinc(name: str, raw: str) -> Iterator[Row]:
    """Every utterance, in-scope and out-of-scope; grouped by intent."""
    for part, rows in sorted(json.loads(raw).items()):
        for text, intent in rows:
            yield (intent if intent != "oos" else f"oos-{part}"), text.strip(), "", "en"


def _read_banking(name: str, raw: str) -> Iterator[Row]:
    for row in csv.DictReader(io.StringIO(raw)):
        yield row["category"], row["text"].strip(), "", "en"


READERS: dict[str, Callable[[str, str], Iterator[Row]]] = {
    "gptfuzz": _read_gptfuzz,
    "whole_file": _read_whole_file,
    "cyberseceval": _read_cyberseceval,
    "cyberseceval_system": _read_cyberseceval_system,
    "jailbreaks": _read_jailbreaks,
    "tensor_trust": _read_tensor_trust,
    "markdown": _read_markdown,
    "hh_rlhf": _read_hh_rlhf,
    "clinc": _read_clinc,
    "banking": _read_banking,
}


def fetched_texts() -> Iterator[Text]:
    """Every text of every fetched source (:func:`verify` first), deduplicated per source."""
    for source in SOURCES:
        name, use = str(source["name"]), str(source["use"])
        files = list(source.get("files", {}))  # type: ignore[call-overload]
        for pattern in source.get("globs", {}):  # type: ignore[attr-defined]
            files += list(_local_files(source, pattern))
        seen: set[str] = set()
        for file in sorted(files):
            data = (_target(source) / file).read_bytes()
            raw = (gzip.decompress(data) if file.endswith(".gz") else data).decode("utf-8")
            for group, text, category, language in READERS[str(source["reader"])](file, raw):
                if not text or text in seen:
                    continue
                seen.add(text)
                key = f"{name}/{group}" if group else f"{name}/{file}"
                split = split_of(key) if use == "train" else "heldout"
                yield Text(
                    name,
                    split,
                    int(source["label"]),  # type: ignore[call-overload]
                    text,
                    category or str(source.get("category", "")),
                    language,
                )


def _show(name: str) -> str:
    show = ["git", "-C", str(ROOT), "show", f"{DOCS_COMMIT}:{name}"]
    return subprocess.run(show, check=True, capture_output=True, text=True).stdout


def repository_docs() -> Iterator[Text]:
    """The paragraphs of docs/*.md and README*.md at DOCS_COMMIT."""
    listing = ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", DOCS_COMMIT]
    names = subprocess.run(listing, check=True, capture_output=True, text=True).stdout.split()
    for name in sorted(names):
        if name.endswith(".md") and (name.startswith("docs/") or "README" in name):
            for paragraph in _paragraphs(_show(name)):
                yield Text("docs", split_of(name), 0, paragraph, "project_docs")


def commit_messages() -> Iterator[Text]:
    """The messages of this repository's commits up to DOCS_COMMIT, split by commit."""
    log = ["git", "-C", str(ROOT), "log", "--format=%H%x00%B%x1e", DOCS_COMMIT]
    out = subprocess.run(log, check=True, capture_output=True, text=True).stdout
    for record in out.split("\x1e"):
        if "\x00" in record:
            commit, message = record.strip().split("\x00", 1)
            for paragraph in _paragraphs(message):
                yield Text("commits", split_of(commit), 0, paragraph, "commit_messages")


STDLIB_FILES = 400
"""How many standard-library modules (sorted by path, every fourth) give docstrings."""


def stdlib_docstrings() -> Iterator[Text]:
    """The paragraphs of the docstrings of standard-library modules, split by module."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    skip = ("site-packages", "test", "idlelib", "lib2to3", "tkinter", "turtledemo")
    files = [
        p
        for p in sorted(stdlib.rglob("*.py"))
        if not any(part in skip for part in p.relative_to(stdlib).parts)
    ][::4][:STDLIB_FILES]
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        name = str(path.relative_to(stdlib))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    for paragraph in _paragraphs(doc):
                        yield Text("stdlib", split_of(name), 0, paragraph, "docstrings")


def chat_messages() -> Iterator[Text]:
    """REALTALK's chat messages (fetched by ``public_sets.py fetch``): odd-numbered
    chats are dev (the review threshold is calibrated on them), even ones test;
    none is trained on (the set states no licence)."""
    from public_sets import DATA as PUBLIC_DATA
    from public_sets import REALTALK
    from public_sets import verify as verify_public

    verify_public(REALTALK)
    for name in REALTALK["files"]:
        number = int(Path(name).name.split("_")[1])
        chat = json.loads((PUBLIC_DATA / "realtalk" / Path(name).name).read_text(encoding="utf-8"))
        for key, turns in chat.items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    text = turn.get("clean_text", "").strip() if isinstance(turn, dict) else ""
                    if text:
                        split = "dev" if number % 2 else "test"
                        yield Text("REALTALK", split, 0, text, "chat_messages")


def real_texts(with_chat: bool = True) -> list[Text]:
    """Every real text: fetched sources, this repository's text, docstrings, chats."""
    problem = verify()
    if problem:
        raise SystemExit(f"the detector's real data is not all fetched: {problem}")
    texts = [*fetched_texts(), *repository_docs(), *commit_messages(), *stdlib_docstrings()]
    if with_chat:
        texts += chat_messages()
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["fetch", "verify", "digests"])
    parser.add_argument(
        "--from",
        dest="local",
        action="append",
        default=[],
        help="NAME=GITDIR: read that source from a local clone (bare or not)",
    )
    args = parser.parse_args(argv)
    if args.command == "fetch":
        fetch({k: Path(v) for k, v in (item.split("=", 1) for item in args.local)})
    if args.command == "digests":
        for source in SOURCES:
            print(source["name"], json.dumps(digests(source), indent=1))
        return 0
    problem = verify()
    print(problem or "all detector sets present and verified")
    return 1 if problem else 0


if __name__ == "__main__":
    raise SystemExit(main())
