"""Read the whole Ascend stack of this machine (or of --root DIR) into one snapshot."""

from __future__ import annotations

import argparse

from ascenv import errors, serde
from ascenv.commands import _common as common
from ascenv.model import Snapshot
from ascenv.probe import collect

NAME = "snapshot"
ORDER = 20
HELP = "read driver, firmware, CANN, devices, environment and Python into one snapshot"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common.add_machine_options(parser)
    parser.add_argument("-o", "--output", metavar="FILE", help="also write the JSON snapshot to FILE")
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    snapshot = collect(common.root_argument(ctx, args.root), ctx.environ, ctx.run, python=args.python)
    data = snapshot_to_json(snapshot)
    if args.output:
        import json
        import os

        from ascenv.fsutil import write_atomic

        try:
            # 0600: a snapshot names serial numbers and home paths (report redacts them)
            write_atomic(os.path.join(ctx.cwd, args.output), json.dumps(data, indent=2) + "\n", mode=0o600)
        except OSError as exc:
            raise errors.UsageError(
                f"cannot write {args.output}: {exc.strerror or exc}",
                hint="-o takes a file path in a writable directory",
            ) from None
    if args.format == "json":
        ctx.out.json(data)
    else:
        from ascenv.output.snapshot import render_snapshot

        render_snapshot(ctx.out, snapshot)
    return errors.EXIT_OK


def snapshot_to_json(snapshot: Snapshot) -> dict:
    data = serde.to_data(snapshot)
    data["python"]["packages"] = snapshot.python.packages  # derived; dropped again on load
    return data


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
        if data.get("schema") != 1:
            raise errors.InputError(
                f"{source}: snapshot schema {data.get('schema')!r} is not supported (this ascenv reads schema 1)"
            )
    try:
        return serde.from_data(Snapshot, data)
    except errors.SchemaError as exc:
        raise errors.InputError(f"{source}: {exc}", hint="regenerate it with `ascenv snapshot -o FILE`") from None


def read_snapshot_json(path: str, name: str) -> object:
    """The parsed JSON of a snapshot file, or an InputError naming ``name``."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise errors.InputError(f"cannot read snapshot {name}: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.InputError(f"{name} is not a JSON snapshot: {exc}") from None


def load_snapshot(path: str) -> Snapshot:
    return snapshot_from_json(read_snapshot_json(path, path), path)
