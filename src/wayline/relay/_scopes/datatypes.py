"""Value types with the nemo_relay names: scope types, attribute flags, requests, tool results."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar

from wayline.relay.jsonfmt import JsonText

__all__ = [
    "Json",
    "LLMAttributes",
    "LLMRequest",
    "ScopeAttributes",
    "ScopeType",
    "ToolAttributes",
    "ToolExecutionResult",
]

Json: TypeAlias = Any
"""Any JSON-compatible value (dict, list, str, int, float, bool, None)."""


class ScopeType(StrEnum):
    """Semantic category of a scope; its value is the ATOF ``category`` string."""

    Agent = "agent"
    Function = "function"
    Llm = "llm"
    Tool = "tool"
    Retriever = "retriever"
    Embedder = "embedder"
    Reranker = "reranker"
    Guardrail = "guardrail"
    Evaluator = "evaluator"
    Custom = "custom"
    Unknown = "unknown"


class _Flags:
    """Bit flags rendered as ATOF attribute strings (sorted, lowercase)."""

    __slots__ = ("value",)
    _NAMES: ClassVar[tuple[tuple[int, str], ...]] = ()
    _strings_cache: ClassVar[dict[int, tuple[str, ...]]]

    def __init__(self, value: int = 0) -> None:
        self.value = int(value)

    def __init_subclass__(cls) -> None:
        cls._strings_cache = {}

    @classmethod
    def strings_of(cls, value: int) -> tuple[str, ...]:
        """The sorted attribute strings for a raw bitmask (cached per value)."""
        cached = cls._strings_cache.get(value)
        if cached is None:
            cached = tuple(sorted({name for bit, name in cls._NAMES if value & bit}))
            cls._strings_cache[value] = cached
        return cached

    @property
    def strings(self) -> tuple[str, ...]:
        """The sorted attribute strings of these flags."""
        return self.strings_of(self.value)

    def __or__(self, other: object) -> Any:
        if isinstance(other, int | _Flags):
            return type(self)(self.value | int(other))
        return NotImplemented

    def __and__(self, other: object) -> Any:
        if isinstance(other, int | _Flags):
            return type(self)(self.value & int(other))
        return NotImplemented

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Flags):
            return type(other) is type(self) and other.value == self.value
        if isinstance(other, int):
            return other == self.value
        return NotImplemented

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.value))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value})"


def attribute_bits(flags: object, kind: type[_Flags]) -> int:
    """The raw bitmask of ``None``, an ``int`` or a flags object of ``kind``."""
    if flags is None:
        return 0
    if isinstance(flags, kind):
        return flags.value
    if isinstance(flags, int) and not isinstance(flags, bool):
        return flags
    raise TypeError(f"attributes must be {kind.__name__}, int or None, not {type(flags).__name__}")


class ScopeAttributes(_Flags):
    """Scope flags: ``PARALLEL`` ("parallel"), ``RELOCATABLE`` ("relocatable")."""

    __slots__ = ()
    PARALLEL: ClassVar[int] = 1
    RELOCATABLE: ClassVar[int] = 2
    _NAMES = ((1, "parallel"), (2, "relocatable"))

    @property
    def is_parallel(self) -> bool:
        """Whether ``PARALLEL`` is set."""
        return bool(self.value & 1)

    @property
    def is_relocatable(self) -> bool:
        """Whether ``RELOCATABLE`` is set."""
        return bool(self.value & 2)


class ToolAttributes(_Flags):
    """Tool flags: ``REMOTE`` ("remote")."""

    __slots__ = ()
    REMOTE: ClassVar[int] = 1
    _NAMES = ((1, "remote"),)

    @property
    def is_remote(self) -> bool:
        """Whether ``REMOTE`` is set."""
        return bool(self.value & 1)


class LLMAttributes(_Flags):
    """LLM flags: ``STATEFUL`` ("stateful"), ``STREAMING`` ("streaming")."""

    __slots__ = ()
    STATEFUL: ClassVar[int] = 1
    STREAMING: ClassVar[int] = 2
    _NAMES = ((1, "stateful"), (2, "streaming"))

    @property
    def is_stateful(self) -> bool:
        """Whether ``STATEFUL`` is set."""
        return bool(self.value & 1)

    @property
    def is_streaming(self) -> bool:
        """Whether ``STREAMING`` is set."""
        return bool(self.value & 2)


class LLMRequest:
    """An LLM request: transport ``headers`` and the JSON body ``content`` sent to a provider."""

    __slots__ = ("content", "headers")

    def __init__(self, headers: Mapping[str, Json], content: Mapping[str, Json]) -> None:
        if not isinstance(headers, Mapping):
            raise TypeError(
                f"LLMRequest headers must be a mapping: '{type(headers).__name__}' object is "
                "not an instance of 'dict'"
            )
        if not isinstance(content, Mapping):
            raise TypeError(f"LLMRequest content must be a mapping, not {type(content).__name__}")
        self.headers: dict[str, Json] = dict(headers)
        # A JsonText is kept as is: it is read-only and its text must stay with it.
        self.content: dict[str, Json] = content if content.__class__ is JsonText else dict(content)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LLMRequest):
            return NotImplemented
        return self.headers == other.headers and self.content == other.content

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LLMRequest(headers={self.headers!r}, content={self.content!r})"


_T = TypeVar("_T")


class ToolExecutionResult(Generic[_T]):
    """What a tool returns: the application-owned ``result`` and an opaque ``annotation``.

    The annotation is carried to observers (``category_profile.tool_result_annotation`` on a
    successful tool end) and never interpreted.
    """

    __slots__ = ("annotation", "result")

    def __init__(self, result: _T, annotation: Json | None = None) -> None:
        self.result = result
        self.annotation = annotation

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolExecutionResult):
            return NotImplemented
        return bool(self.result == other.result and self.annotation == other.annotation)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ToolExecutionResult(result={self.result!r}, annotation={self.annotation!r})"
