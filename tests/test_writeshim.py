"""The on_memory_write shim: call shape chosen from each provider's signature."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from hermes_core.writeshim import MemoryWriteShim, WriteCallShape, write_call_shape


class Keyword:
    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        self.calls.append(((action, target, content), {"metadata": metadata}))


class MetadataRequired:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict) -> None:  # type: ignore[type-arg]
        self.calls.append((action, target, content, metadata))


class VarKeyword:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def on_memory_write(self, action: str, target: str, content: str, **kwargs: Any) -> None:
        self.calls.append((action, target, content, kwargs))


class FourthNamedDifferently:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def on_memory_write(self, action: str, target: str, content: str, extra: Any) -> None:
        self.calls.append((action, target, content, extra))


class Legacy:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        self.calls.append((action, target, content))


class KeywordOnlyExtra:
    """Hermes would call this with four positional arguments and crash."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def on_memory_write(self, action: str, target: str, content: str, *, note: str = "") -> None:
        self.calls.append((action, target, content, note))


class StarArgs:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def on_memory_write(self, *args: Any) -> None:
        self.calls.append(args)


class Uninspectable:
    """A callable whose signature cannot be read is assumed to take ``metadata=``."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    @property
    def on_memory_write(self) -> Any:
        recorder = self.calls

        class Opaque:
            __signature__ = "not a signature"

            def __call__(self, *args: Any, **kwargs: Any) -> None:
                recorder.append((args, kwargs))

        return Opaque()


@pytest.mark.parametrize(
    ("provider", "shape"),
    [
        (Keyword(), WriteCallShape.KEYWORD),
        (MetadataRequired(), WriteCallShape.KEYWORD),
        (VarKeyword(), WriteCallShape.KEYWORD),
        (Uninspectable(), WriteCallShape.KEYWORD),
        (FourthNamedDifferently(), WriteCallShape.POSITIONAL),
        (Legacy(), WriteCallShape.LEGACY),
        (KeywordOnlyExtra(), WriteCallShape.LEGACY),
        (StarArgs(), WriteCallShape.LEGACY),
    ],
)
def test_shape_is_read_from_the_bound_signature(provider: Any, shape: WriteCallShape) -> None:
    assert write_call_shape(provider.on_memory_write) is shape
    assert MemoryWriteShim(provider).shape is shape


def test_partial_with_bound_arguments_counts_what_is_left() -> None:
    def write(prefix: str, action: str, target: str, content: str) -> None:
        pass

    assert write_call_shape(functools.partial(write, "p")) is WriteCallShape.LEGACY


def test_each_shape_receives_what_it_accepts() -> None:
    metadata = {"session_id": "s1"}
    keyword, required, var_kw = Keyword(), MetadataRequired(), VarKeyword()
    fourth, legacy, kw_only, star = (
        FourthNamedDifferently(),
        Legacy(),
        KeywordOnlyExtra(),
        StarArgs(),
    )
    for provider in (keyword, required, var_kw, fourth, legacy, kw_only, star):
        MemoryWriteShim(provider)("add", "memory", "fact", metadata)
    assert keyword.calls == [(("add", "memory", "fact"), {"metadata": {"session_id": "s1"}})]
    assert required.calls == [("add", "memory", "fact", {"session_id": "s1"})]
    assert var_kw.calls == [("add", "memory", "fact", {"metadata": {"session_id": "s1"}})]
    assert fourth.calls == [("add", "memory", "fact", {"session_id": "s1"})]
    assert legacy.calls == [("add", "memory", "fact")]
    assert kw_only.calls == [("add", "memory", "fact", "")]
    assert star.calls == [("add", "memory", "fact")]


def test_uninspectable_callable_is_called_with_metadata_keyword() -> None:
    provider = Uninspectable()
    MemoryWriteShim(provider)("remove", "user", "", {"old_text": "x"})
    assert provider.calls == [(("remove", "user", ""), {"metadata": {"old_text": "x"}})]


def test_every_call_gets_a_fresh_metadata_dict() -> None:
    provider = Keyword()
    shim = MemoryWriteShim(provider)
    metadata = {"k": "v"}
    shim("add", "memory", "a", metadata)
    shim("add", "memory", "b", None)
    first, second = (call[1]["metadata"] for call in provider.calls)
    assert first == {"k": "v"} and first is not metadata
    assert second == {}


def test_a_positional_only_metadata_parameter_gets_metadata_positionally() -> None:
    class PositionalOnly:
        def __init__(self) -> None:
            self.calls: list[Any] = []

        def on_memory_write(
            self, action: str, target: str, content: str, metadata: Any = None, /, **kw: Any
        ) -> None:
            self.calls.append((action, target, content, metadata, kw))

    provider = PositionalOnly()
    shim = MemoryWriteShim(provider)
    assert shim.shape is WriteCallShape.POSITIONAL
    shim("add", "memory", "fact", {"session_id": "s1"})
    assert provider.calls == [("add", "memory", "fact", {"session_id": "s1"}, {})]
