"""The word pieces of an ASCII text, read straight from a BERT tokenizer's
``tokenizer.json``: no ``tokenizers`` import, no parse of the whole vocabulary.

A search's question is encoded once per process; building the tokenizer, or even parsing
its 30,000-entry vocabulary, costs more than the rest of the encoding. For ASCII text the
BERT pipeline is short (drop control characters, whitespace to spaces, lower case; split at
whitespace and around each ASCII punctuation mark; greedy longest-match word pieces), and
only the pieces tried need looking up: each is found as a key in the file's compact JSON
(``{"piece":id`` or ``,"piece":id``; inside a key a quote is always escaped, so such a match
is a key). Other text (or a tokenizer of another kind) is left to
:class:`~hermes_core.embeddings._WordPieces` and the tokenizer itself.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["AsciiPieces", "word_pieces"]

_PUNCTUATION = re.compile(f"([{re.escape(string.punctuation)}])")
_DROPPED = {c: None for c in range(32) if chr(c) not in "\t\n\r"} | {127: None}
_SPACES = {ord("\t"): " ", ord("\n"): " ", ord("\r"): " "}
_NORMALIZER = {"clean_text": True, "handle_chinese_chars": True, "type": "BertNormalizer"}


def word_pieces(
    word: str, lookup: Callable[[str], int | None], prefix: str, longest: int, unknown: int
) -> list[int]:
    """The ids of *word* cut into WordPiece pieces: greedy longest match from its start, each
    piece after the first looked up with *prefix* (``##``); a word longer than *longest*
    characters, or with a part no piece matches, is the one id *unknown*."""
    if len(word) > longest:
        return [unknown]
    pieces: list[int] = []
    start = 0
    while start < len(word):
        for end in range(len(word), start, -1):
            found = lookup(word[start:end] if start == 0 else prefix + word[start:end])
            if found is not None:
                pieces.append(found)
                break
        else:
            return [unknown]
        start = end
    return pieces


def _object_at(text: str, key: str) -> Any:
    """The JSON value after the first ``"key":`` of *text* (``None`` when absent)."""
    at = text.find(f'"{key}":')
    if at < 0:
        return None
    return json.JSONDecoder().raw_decode(text, at + len(key) + 3)[0]


class AsciiPieces:
    """The word-piece ids of ASCII texts by the tokenizer whose JSON is *text*."""

    def __init__(
        self, data: bytes, vocab_at: int, head: str, lowercase: bool, added: list[str]
    ) -> None:
        self._bytes = data  # searched as bytes, never decoded whole
        self._vocab_at = vocab_at
        self._found: dict[str, int | None] = {}
        self.lowercase = lowercase
        self.added = added
        # The model's fields before its vocabulary, closed without it.
        model = json.loads(head[head.rfind('"model":{') + len('"model":') :] + '"vocab":null}')
        self.prefix = str(model["continuing_subword_prefix"])
        self.longest = int(model["max_input_chars_per_word"])
        unknown = self.lookup(str(model["unk_token"]))
        if unknown is None:
            raise ValueError("the unknown token is not in the vocabulary")
        self.unknown = unknown

    @classmethod
    def read(cls, path: Path) -> AsciiPieces | None:
        """The pieces of the tokenizer at *path*; ``None`` unless it is the BERT WordPiece
        pipeline in compact JSON this class reads."""
        try:
            data = path.read_bytes()
            model = data.rfind(b'"model":{')
            vocab_at = data.index(b'"vocab":{', model)
            text = data[:vocab_at].decode("utf-8")  # all but the vocabulary
            normalizer = _object_at(text, "normalizer") or {}
            pre_tokenizer = _object_at(text, "pre_tokenizer") or {}
            added = [str(token["content"]) for token in _object_at(text, "added_tokens") or []]
            if {k: normalizer.get(k) for k in _NORMALIZER} != _NORMALIZER:
                return None
            if normalizer.get("strip_accents") not in (None, True, False):
                return None
            if pre_tokenizer.get("type") != "BertPreTokenizer" or model < 0:
                return None
            if not text[text.rfind('"model":{') :].startswith('"model":{"type":"WordPiece",'):
                return None
            return cls(data, vocab_at, text, bool(normalizer.get("lowercase")), added)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None

    def lookup(self, piece: str) -> int | None:
        """The id of *piece* in the vocabulary, or ``None``."""
        if piece in self._found:
            return self._found[piece]
        key = json.dumps(piece).encode("ascii")
        first = self._vocab_at + len(b'"vocab":')
        if self._bytes.startswith(b"{" + key + b":", first):
            at = first
        else:
            at = self._bytes.find(b"," + key + b":", first)
        found = None
        if at >= 0:
            start = at + len(key) + 2
            end = start
            while self._bytes[end : end + 1].isdigit():
                end += 1
            found = int(self._bytes[start:end])
        self._found[piece] = found
        return found

    def ids(self, text: str) -> list[int] | None:
        """The ids of *text*; ``None`` when it is not ASCII or holds an added token (such as
        ``[SEP]``, which the tokenizer matches before normalising)."""
        if not text.isascii() or any(token in text for token in self.added):
            return None
        normal = text.translate(_DROPPED).translate(_SPACES)
        if self.lowercase:
            normal = normal.lower()
        ids: list[int] = []
        for chunk in normal.split():
            for word in _PUNCTUATION.split(chunk):
                if word:
                    ids += word_pieces(word, self.lookup, self.prefix, self.longest, self.unknown)
        return ids
