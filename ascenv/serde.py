"""Frozen dataclasses to plain data and back, validating every key on the way in.

``from_data`` reports the path of the first bad key (``npu.chips[3].name: expected string``),
so a hand-edited or truncated snapshot, lock or data file gives a clear error, not a traceback.
Annotations use ``typing.Optional``/``Union`` so they evaluate on Python 3.9. This module and
the probe also run on a fleet node's own Python, as old as 3.7 (``ascenv fleet``): there the
builtin generics of the annotations (``tuple[str, ...]``) are read as their ``typing`` aliases
(PEP 585 made them subscriptable in 3.9), and ``get_origin``/``get_args`` (3.8) are read off the
alias itself.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import sys
import typing
from array import array
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from ascenv.errors import SchemaError
from ascenv.fsutil import shown

_NONE = type(None)
_TYPE_WORDS = {str: "string", int: "integer", float: "number", bool: "boolean"}


KeyNamer = Optional[Callable[[str], str]]

if sys.version_info >= (3, 9):  # noqa: UP036 - see the module's docstring
    _get_origin, _get_args = typing.get_origin, typing.get_args
    _OLD_GENERICS: Optional[dict] = None
else:  # pragma: no cover - fleet nodes' Python 3.7/3.8 (tests/fleet runs it)

    def _get_origin(cls: Any) -> Any:
        return getattr(cls, "__origin__", None)

    def _get_args(cls: Any) -> tuple:
        return getattr(cls, "__args__", None) or ()

    _OLD_GENERICS = {"tuple": typing.Tuple, "list": typing.List, "dict": typing.Dict}  # noqa: UP006


def kebab(name: str) -> str:
    """``lock_version`` -> ``lock-version``: the TOML convention (uv.lock, poetry.lock, pylock)."""
    return name.replace("_", "-")


def to_data(obj: Any, *, key: KeyNamer = None) -> Any:
    """Dataclasses become dicts (field order kept), tuples lists, enums their values.

    ``key`` renames dataclass fields (e.g. ``kebab``); keys of plain dict fields are kept as is.
    Text holding bytes that are not UTF-8 (a path given as ``bad\\xff``, read with surrogateescape)
    is recorded as shown (``fsutil.shown``): no UTF-8 file could hold it, and ``from_data`` refuses it."""
    if isinstance(obj, str):
        return shown(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            (key(f.name) if key else f.name): to_data(getattr(obj, f.name), key=key) for f in dataclasses.fields(obj)
        }
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (list, tuple, array)):
        return [to_data(v, key=key) for v in obj]
    if isinstance(obj, Mapping):
        return {shown(str(k)): to_data(v, key=key) for k, v in obj.items()}
    return obj


def from_data(cls: Any, data: Any, path: str = "", *, key: KeyNamer = None) -> Any:
    """Build ``cls`` (a dataclass or a typing annotation) from plain data, or raise SchemaError.

    ``key`` is the field naming used by ``to_data``; error paths use the names as written."""
    origin = _get_origin(cls)
    args = _get_args(cls)
    if cls is Any:
        return data
    if origin is typing.Union:
        if data is None and _NONE in args:
            return None
        options = [a for a in args if a is not _NONE]
        errors = []
        for option in options:
            try:
                return from_data(option, data, path, key=key)
            except SchemaError as exc:
                errors.append(exc)
        raise errors[0] if len(errors) == 1 else SchemaError(path, f"expected {_describe(cls)}")
    if origin in (tuple, list, Sequence):
        if not isinstance(data, (list, tuple)):
            raise SchemaError(path, f"expected a list, found {_found(data)}")
        item = args[0] if args else Any
        values = [from_data(item, v, f"{path}[{i}]", key=key) for i, v in enumerate(data)]
        return tuple(values) if origin is tuple else values
    if origin in (dict, Mapping) or cls is dict:
        if not isinstance(data, Mapping):
            raise SchemaError(path, f"expected a table, found {_found(data)}")
        value_type = args[1] if len(args) == 2 else Any
        return {
            _text(str(k), _join(path, str(k))): from_data(value_type, v, _join(path, str(k)), key=key)
            for k, v in data.items()
        }
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        try:
            return cls(data)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in cls)
            raise SchemaError(path, f"expected one of {allowed}, found {data!r}") from None
    if dataclasses.is_dataclass(cls):
        return _dataclass_from_data(cls, data, path, key)
    if cls is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if cls in _TYPE_WORDS:
        if cls is str and isinstance(data, str):
            return _text(data, path)
        if isinstance(data, cls) and not (cls is int and isinstance(data, bool)):
            return data
        raise SchemaError(path, f"expected {_TYPE_WORDS[cls]}, found {_found(data)}")
    raise TypeError(f"from_data cannot build {cls!r}")  # a bug in a model, not bad input


def _dataclass_from_data(cls: Any, data: Any, path: str, key: KeyNamer = None) -> Any:
    if not isinstance(data, Mapping):
        raise SchemaError(path, f"expected a table, found {_found(data)}")
    hints = _hints(cls)
    fields = {(key(f.name) if key else f.name): f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise SchemaError(_join(path, unknown[0]), "unknown key")
    kwargs = {}
    for wire, field in fields.items():
        if wire in data:
            kwargs[field.name] = from_data(hints[field.name], data[wire], _join(path, wire), key=key)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise SchemaError(_join(path, wire), "missing")
    return cls(**kwargs)


def _text(data: str, path: str) -> str:
    """A string that can be written out: JSON's ``"\\ud800"`` escape reads as a lone surrogate,
    which no UTF-8 output can encode (it would fail when printed, far from the input)."""
    if not data.isascii():
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            raise SchemaError(path, "not valid Unicode text (a lone surrogate escape such as \\ud800)") from None
    return data


@functools.lru_cache(maxsize=None)  # noqa: UP033 - functools.cache is 3.9+
def _hints(cls: Any) -> dict:
    return typing.get_type_hints(cls, localns=_OLD_GENERICS)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _found(data: Any) -> str:
    if data is None:
        return "nothing"
    return _TYPE_WORDS.get(type(data), type(data).__name__) + f" {data!r}"[:60]


def _describe(cls: Any) -> str:
    args = [a for a in _get_args(cls) if a is not _NONE]
    return " or ".join(_TYPE_WORDS.get(a, getattr(a, "__name__", str(a))) for a in args)
