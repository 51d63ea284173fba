"""Real text for the learned detector: public attack prompts (fetched) and benign prose.

Attack sets are other people's data: ``python bench/detector_data.py fetch`` copies
the pinned files into ``bench/data/detector/`` (ignored by git) and checks each
sha256; nothing of them is committed. Benign text is this repository's own docs
and READMEs *at a pinned commit* (read with ``git show``, so later edits do not
move the training set) and the docstrings of the Python standard library (PSF
licence) of the running interpreter. Every text is assigned to train, dev
(calibration) or test (reported only) by a hash of its *source file* (for the
one-file GPTFuzz set: of its row id), so no file's lines are on both sides.

REALTALK's chat messages (``chat_messages``) only calibrate and report: odd chats
set the review threshold, even chats are reported.

Not used, ever (kept for independent evaluation): garak, spikee, BIPIA,
AgentDojo, LoCoMo, PersonaChat, XPersona, awesome-cursorrules,
everything-claude-code.

Usage::

    python bench/detector_data.py fetch [--from OWNER+NAME=GITDIR ...]
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import io
import subprocess
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data" / "detector"

DOCS_COMMIT = "d869c8a"
"""The commit of this repository whose docs/*.md and README*.md are benign training text."""

ATTACK_SOURCES = [
    {
        "name": "GPTFuzz",
        "repository": "https://github.com/sherdencooper/GPTFuzz",
        "commit": "1eddeb565740ae311b5f4950492b011a6f866fe7",
        "licence": "MIT",
        "kind": "csv",
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
        "kind": "text",
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
]

SPLITS = ("train", "dev", "test")


def split_of(key: str) -> str:
    """train (60 %), dev (20 %) or test (20 %), by a stable hash of *key*."""
    bucket = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 5
    return "train" if bucket < 3 else ("dev" if bucket == 3 else "test")


def _target(source: dict[str, object]) -> Path:
    return DATA / str(source["name"]).lower()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(local: dict[str, Path]) -> None:
    """Copy every pinned file out of a clone (cloned here unless *local* names one)."""
    for source in ATTACK_SOURCES:
        with tempfile.TemporaryDirectory() as tmp:
            git_dir = local.get(str(source["name"]))
            if git_dir is None:
                git_dir = Path(tmp) / "clone"
                clone = ["git", "clone", "-q", "--bare", str(source["repository"]), str(git_dir)]
                subprocess.run(clone, check=True)
            for name in source["files"]:  # type: ignore[attr-defined]
                show = ["git", "-C", str(git_dir), "show", f"{source['commit']}:{name}"]
                data = subprocess.run(show, check=True, capture_output=True).stdout
                path = _target(source) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
    missing = verify()
    if missing:
        raise SystemExit(missing)


def verify() -> str:
    """An empty string if every pinned file is present with its sha256, else what is wrong."""
    for source in ATTACK_SOURCES:
        for name, digest in source["files"].items():  # type: ignore[attr-defined]
            path = _target(source) / name
            if not path.is_file():
                return f"{path} is missing: run `python bench/detector_data.py fetch` first"
            if sha256(path.read_bytes()) != digest:
                return f"{path}: sha256 is not the recorded {digest}; fetch again"
    return ""


def real_attacks() -> Iterator[tuple[str, str, str]]:
    """(source, split, text) of every fetched attack prompt."""
    for source in ATTACK_SOURCES:
        for name in sorted(source["files"]):  # type: ignore[attr-defined]
            raw = (_target(source) / name).read_text(encoding="utf-8")
            key = f"{source['name']}/{name}"
            if source["kind"] == "csv":
                for row in csv.DictReader(io.StringIO(raw)):
                    yield str(source["name"]), split_of(f"{key}#{row['id']}"), row["text"].strip()
            elif source["kind"] == "yaml":
                yield str(source["name"]), split_of(key), str(yaml.safe_load(raw)["prompt"]).strip()
            else:
                yield str(source["name"]), split_of(key), raw.strip()


def _paragraphs(text: str) -> Iterator[str]:
    for block in text.split("\n\n"):
        block = " ".join(line.strip() for line in block.splitlines()).strip()
        if len(block) >= 12 and not block.startswith(("```", "|", ">>>")):
            yield block[:600]


def repository_docs() -> Iterator[tuple[str, str, str]]:
    """(source, split, paragraph) of docs/*.md and README*.md at DOCS_COMMIT."""
    listing = ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", DOCS_COMMIT]
    names = subprocess.run(listing, check=True, capture_output=True, text=True).stdout.split()
    for name in sorted(names):
        if not (name.endswith(".md") and (name.startswith("docs/") or "README" in name)):
            continue
        show = ["git", "-C", str(ROOT), "show", f"{DOCS_COMMIT}:{name}"]
        text = subprocess.run(show, check=True, capture_output=True, text=True).stdout
        for paragraph in _paragraphs(text):
            yield "docs", split_of(name), paragraph


STDLIB_FILES = 400
"""How many standard-library modules (sorted by path, every fourth) give docstrings."""


def stdlib_docstrings() -> Iterator[tuple[str, str, str]]:
    """(source, split, paragraph) of the docstrings of standard-library modules."""
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
                        yield "stdlib", split_of(name), paragraph


def chat_messages() -> Iterator[tuple[str, str, str]]:
    """(source, split, message) of REALTALK's chats (fetched by ``public_sets.py fetch``):
    odd-numbered chats are dev (the review threshold is calibrated on them), even ones
    test; none is trained on (the set states no licence)."""
    import json

    from public_sets import DATA as PUBLIC_DATA
    from public_sets import REALTALK, verify

    verify(REALTALK)
    for name in REALTALK["files"]:
        number = int(Path(name).name.split("_")[1])
        chat = json.loads((PUBLIC_DATA / "realtalk" / Path(name).name).read_text(encoding="utf-8"))
        for key, turns in chat.items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    text = turn.get("clean_text", "").strip() if isinstance(turn, dict) else ""
                    if text:
                        yield "chat", "dev" if number % 2 else "test", text


def real_benign() -> Iterator[tuple[str, str, str]]:
    yield from repository_docs()
    yield from stdlib_docstrings()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["fetch", "verify"])
    parser.add_argument(
        "--from",
        dest="local",
        action="append",
        default=[],
        help="NAME=GITDIR: read that set from a local clone (bare or not)",
    )
    args = parser.parse_args(argv)
    if args.command == "fetch":
        fetch({k: Path(v) for k, v in (item.split("=", 1) for item in args.local)})
    problem = verify()
    print(problem or "all detector sets present and verified")
    return 1 if problem else 0


if __name__ == "__main__":
    raise SystemExit(main())
