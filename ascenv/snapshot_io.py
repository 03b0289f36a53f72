"""A snapshot as JSON: written by ``ascenv snapshot -o``, read back by ``doctor --from``,
``lock --from``, ``report --from``, ``diff`` and the report bundle. Errors name the file and the
key path (``host.arch: expected string``) and are InputErrors (exit 2), whatever the file holds."""

from __future__ import annotations

import json
import os
from typing import Union

from ascenv import errors, fsutil, serde
from ascenv.model import Snapshot

REGENERATE = "regenerate it with `ascenv snapshot -o FILE`"


def snapshot_to_json(snapshot: Snapshot) -> dict:
    data = serde.to_data(snapshot)
    data["python"]["packages"] = snapshot.python.packages  # derived; dropped again on load
    return data


def dumps_snapshot(snapshot: Snapshot) -> str:
    return json.dumps(snapshot_to_json(snapshot), indent=2) + "\n"


def snapshot_from_json(data: object, source: str) -> Snapshot:
    """A saved snapshot back into the model; errors name the file and the key path."""
    if isinstance(data, dict):
        data = dict(data)
        if isinstance(data.get("python"), dict):
            data["python"] = {k: v for k, v in data["python"].items() if k != "packages"}
        if "schema" not in data:
            raise errors.InputError(
                f'{source}: not an ascenv snapshot (it has no "schema" key)',
                hint="write one with `ascenv snapshot -o FILE`",
            )
        if data.get("schema") != 1 or isinstance(data.get("schema"), bool):
            raise errors.InputError(
                f"{source}: snapshot schema {data.get('schema')!r} is not supported (this ascenv reads schema 1)"
            )
    try:
        return serde.from_data(Snapshot, data)
    except errors.SchemaError as exc:
        raise errors.InputError(f"{source}: {exc}", hint=REGENERATE) from None


def read_snapshot_json(path: Union[str, os.PathLike[str]], name: str) -> object:
    """The parsed JSON of a snapshot file, or an InputError naming ``name``: a FIFO, a device or
    a file above fsutil.INPUT_LIMIT is refused unread; deep nesting and bad UTF-8 are bad input."""
    raw = fsutil.read_input(path, what="snapshot", shown=name, hint="write one with `ascenv snapshot -o FILE`")
    return parse_snapshot_json(raw, name)


def parse_snapshot_json(raw: bytes, name: str) -> object:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise errors.InputError(f"{name} is not a JSON snapshot (not UTF-8 text: {exc.reason})") from None
    except RecursionError:
        raise errors.InputError(f"{name} is not an ascenv snapshot (JSON nested too deep)", hint=REGENERATE) from None
    except ValueError as exc:
        raise errors.InputError(f"{name} is not a JSON snapshot: {exc}", hint=_hint_for(raw)) from None


def _hint_for(raw: bytes) -> str:
    if raw.lstrip().startswith((b"#", b"lock-version")):
        return "this looks like a lock (ascenv lock -o FILE); a snapshot is written by `ascenv snapshot -o FILE`"
    return "write one with `ascenv snapshot -o FILE`"


def load_snapshot(path: Union[str, os.PathLike[str]], shown: str = "") -> Snapshot:
    """The snapshot saved at ``path``; messages call it ``shown`` (the name as the user gave it)."""
    shown = shown or os.fspath(path)
    return snapshot_from_json(read_snapshot_json(path, shown), shown)
