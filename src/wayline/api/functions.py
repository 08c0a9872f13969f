"""Tools from plain typed functions: the JSON schema comes from type hints and the docstring.

Pydantic builds the schema and validates the model's arguments, so every type pydantic knows
(``Literal``, enums, dataclasses, ``BaseModel``, ``list[int]``, ``Annotated[..., Field(...)]``)
works as it does there. The function's docstring gives the tool's description (its first
paragraph) and each parameter's description (a Google-style ``Args:`` section or Sphinx
``:param name:`` lines); a description in ``Annotated[..., Field(description=...)]`` wins.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import re
import threading
import types
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Tool", "UntypedParameterWarning", "tool"]


class UntypedParameterWarning(UserWarning):
    """A function tool's parameter has no type hint: the model gets no schema for it."""


_ARGS_HEADERS = frozenset({"args", "arguments", "parameters", "params"})
_SECTION = re.compile(r"^([A-Z][A-Za-z ]*):\s*$")
_GOOGLE_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_ARG = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


@dataclass(slots=True)
class _LoopBox:
    """The event loop async tools run on while ``Agent.arun`` awaits (None: their own loop)."""

    loop: asyncio.AbstractEventLoop | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class Tool:
    """A typed Python function offered to the model as a tool.

    Calling the ``Tool`` calls the function. The model's arguments are validated against the
    function's signature before the call; invalid arguments, and an exception the function
    raises, become a tool error the model sees (``post_tool_call`` status ``error``). A
    ``str`` result goes to the model as it is; anything else is sent as JSON. An ``async``
    function runs on the event loop of the ``Agent.arun`` call that awaits it, or on a loop of
    its own under ``Agent.run``. Tool functions run on the agent's tool threads (several at
    once when ``parallel_safe``), so they must be thread-safe.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parallel_safe: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a tool must be a function, got {fn!r}")
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", ""))
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ValueError(
                f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-' "
                "(pass name=... to choose one)"
            )
        summary, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
        self.description = description if description is not None else summary
        self.parallel_safe = parallel_safe
        self.is_async = inspect.iscoroutinefunction(fn)
        self.model: type[BaseModel] = _arguments_model(fn, self.name, arg_docs)
        self.parameters: dict[str, Any] = _strip_titles(self.model.model_json_schema())
        self._loop = _LoopBox()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    def schema(self) -> dict[str, Any]:
        """The OpenAI function definition: ``name``, ``description``, ``parameters``."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def handler(self, args: dict[str, Any], **context: Any) -> str:
        """The registry handler: validate ``args``, call the function, encode its result."""
        from pydantic import ValidationError

        try:
            parsed = self.model.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            return json.dumps({"error": f"invalid arguments for {self.name!r}: {problems}"})
        kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        if not self.is_async:
            return _encode(self.fn(**kwargs))
        ctx = context.get("ctx")
        return _encode(self._run_async(kwargs, getattr(ctx, "cancel", None)))

    def _run_async(self, kwargs: dict[str, Any], cancel: threading.Event | None) -> Any:
        """Await the function on the bound loop (or a loop of its own); the turn's cancel
        cancels its task there, which raises ``CancelledError`` inside the function."""
        from wayline.runtime.cancel import on_cancel
        from wayline.runtime.tools.base import ToolCancelled

        with self._loop.lock:
            loop = self._loop.loop
        if loop is None or not loop.is_running():
            return asyncio.run(self._own_loop(kwargs, cancel))
        future = asyncio.run_coroutine_threadsafe(self.fn(**kwargs), loop)
        stop = on_cancel(cancel, future.cancel)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise ToolCancelled(f"{self.name}: cancelled") from None
        finally:
            stop()

    async def _own_loop(self, kwargs: dict[str, Any], cancel: threading.Event | None) -> Any:
        from wayline.runtime.cancel import on_cancel
        from wayline.runtime.tools.base import ToolCancelled

        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(self.fn(**kwargs))
        stop = on_cancel(cancel, lambda: loop.call_soon_threadsafe(task.cancel))
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled():
                raise ToolCancelled(f"{self.name}: cancelled") from None
            raise
        finally:
            stop()

    def bind_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Run this async tool on ``loop`` from now on (None: a fresh loop per call)."""
        with self._loop.lock:
            self._loop.loop = loop


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, parallel_safe: bool = False
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parallel_safe: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` of a function; use bare (``@tool``) or with options.

    A plain function in ``Agent(tools=[...])`` needs no decorator; ``@tool(...)`` is for a
    different name or description, or ``parallel_safe=True`` (several calls of the tool in
    one model reply then run at once).
    """

    def wrap(function: Callable[..., Any]) -> Tool:
        return Tool(function, name=name, description=description, parallel_safe=parallel_safe)

    return wrap if fn is None else wrap(fn)


def as_tool(value: Tool | Callable[..., Any]) -> Tool:
    """``value`` itself when it is a :class:`Tool`, else a ``Tool`` of the function."""
    return value if isinstance(value, Tool) else Tool(value)


def _encode(result: Any) -> str:
    if isinstance(result, str):
        return result
    from pydantic_core import to_json

    return to_json(result, fallback=str).decode()


def _arguments_model(
    fn: Callable[..., Any], tool_name: str, arg_docs: dict[str, str]
) -> type[BaseModel]:
    """A pydantic model whose fields are ``fn``'s parameters."""
    from pydantic import Field, create_model

    # Only the parameters' hints: a return type naming a local class (under
    # ``from __future__ import annotations``) must not make the tool unusable.
    params_only = types.SimpleNamespace(
        __annotations__={
            k: v for k, v in getattr(fn, "__annotations__", {}).items() if k != "return"
        },
        __globals__=getattr(inspect.unwrap(fn), "__globals__", {}),
    )
    try:
        hints = typing.get_type_hints(params_only, include_extras=True)
    except Exception as exc:  # an annotation naming something undefined
        raise TypeError(f"tool {tool_name!r}: cannot read its type hints: {exc}") from None
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"tool {tool_name!r}: *{param.name} parameters are not supported "
                "(the model sends named arguments only)"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(f"tool {tool_name!r}: positional-only parameter {param.name!r}")
        if param.name not in hints:
            _warn_untyped(fn, tool_name, param.name)
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        doc = arg_docs.get(param.name)
        if doc and not _has_description(annotation):
            fields[param.name] = (annotation, Field(default, description=doc))
        else:
            fields[param.name] = (annotation, default)
    model: type[BaseModel] = create_model(f"{tool_name}_arguments", **fields)
    return model


def _warn_untyped(fn: Callable[..., Any], tool_name: str, param: str) -> None:
    """Warn, at the function's own definition, that ``param`` has no type hint."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    message = (
        f"tool {tool_name!r}: parameter {param!r} has no type hint, so its schema says nothing "
        "and the model's JSON value is passed as it is (a string stays a string); annotate "
        f"it, e.g. `{param}: int`"
    )
    if code is None:
        warnings.warn(message, UntypedParameterWarning, stacklevel=4)
        return
    warnings.warn_explicit(message, UntypedParameterWarning, code.co_filename, code.co_firstlineno)


def _has_description(annotation: Any) -> bool:
    """True when ``Annotated[..., Field(description=...)]`` already describes the parameter."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return False
    return any(getattr(meta, "description", None) for meta in typing.get_args(annotation)[1:])


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and parameter descriptions from ``Args:`` or ``:param x:``."""
    lines = doc.splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()) or line.strip().startswith(":"):
            break
        summary.append(line.strip())
    params: dict[str, str] = {}
    in_args = False
    current: str | None = None
    arg_indent = 0
    for line in lines:
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        section = _SECTION.match(text)
        if section and indent == 0:
            in_args = section.group(1).lower() in _ARGS_HEADERS
            current = None
            continue
        sphinx = _SPHINX_ARG.match(text)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            continue
        if not in_args or not text:
            continue
        google = _GOOGLE_ARG.match(text)
        if google and (current is None or indent <= arg_indent):
            current = google.group(1).lstrip("*")
            params[current] = google.group(2).strip()
            arg_indent = indent
        elif current is not None:
            params[current] = f"{params[current]} {text}".strip()
    return " ".join(summary), params


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keywords (noise in a tool schema), keep properties
    that happen to be called ``title``."""
    if isinstance(schema, list):
        return [_strip_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        elif key == "title" and isinstance(value, str):
            continue
        else:
            out[key] = _strip_titles(value)
    return out
