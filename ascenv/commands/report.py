"""Bundle this machine's stack into one file to attach to an issue, instead of pasting npu-smi
info, install.info files and pip list by hand: report.md (paste-ready Markdown), snapshot.json,
findings.json, ascenv.lock, the raw npu-smi output, the version files and the ascenv build
manifests of installed vendors, the baseline and latest bench run of each installed vendor's
operator found in the build store (--store), and MANIFEST.json with every member's sha256. Host names, user
names in home paths, IP addresses, serial numbers and secrets are replaced by placeholders
unless --no-redact. The same inputs give the same bytes (SOURCE_DATE_EPOCH fixes the time)."""

from __future__ import annotations

import argparse
import datetime
import os
import posixpath
import shlex
from collections.abc import Mapping
from dataclasses import replace
from typing import Optional

from ascenv import __version__, errors, lockfile, proc, report
from ascenv.commands import _common as common
from ascenv.model import Snapshot
from ascenv.output import report as render
from ascenv.probe.fs import Root
from ascenv.probe.vendors import MANIFEST as VENDOR_MANIFEST

NAME = "report"
ORDER = 40
BUNDLE_KIND = "a gzip archive"  # -o - refuses to write it to a terminal
HELP = "bundle snapshot, findings, lock and raw captures, redacted, into one file for a bug report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        default=report.DEFAULT_OUTPUT,
        metavar="FILE",
        help=f"where to write the bundle; - for standard output (default: {report.DEFAULT_OUTPUT})",
    )
    common.add_machine_options(parser)
    parser.add_argument(
        "--from",
        dest="from_file",
        metavar="SNAPSHOT",
        help="bundle a saved snapshot (ascenv snapshot -o FILE) instead of this machine",
    )
    parser.add_argument(
        "--include-lock",
        "--lock",  # the old spelling, still accepted: --lock elsewhere names locks whose builds are kept
        dest="lock",
        metavar="LOCK",
        help="put this lock in the bundle (default: one generated from the snapshot); formerly --lock",
    )
    parser.add_argument(
        "--log",
        metavar="LOGFILE",
        help="triage this error log too (ascenv triage) and put its causes in the bundle, redacted",
    )
    parser.add_argument(
        "--no-redact",
        dest="redact",
        action="store_false",
        help="keep host names, user names, IPs, serials and secrets as read",
    )
    common.add_store_option(parser)
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    common.check_output_option(ctx, args.output, args.format, "bundle", binary=BUNDLE_KIND)
    created = report_time(ctx.environ)
    recorder = _Recorder(ctx.run)
    root: Optional[Root] = None
    from ascenv import compat
    from ascenv.checks import run_checks

    matrix = compat.load_cached(ctx.cache_dir, overlay=common.compat_overlay(ctx))  # `compat update` data
    if args.from_file:
        from ascenv.snapshot_io import load_snapshot

        snapshot = load_snapshot(os.path.join(ctx.cwd, args.from_file), args.from_file)
    else:
        from ascenv.probe.snapshot import collect

        root = common.root_argument(ctx, args.root)
        sought = common.jit_strings(matrix)
        snapshot = replace(
            collect(root, ctx.environ, recorder, python=args.python, sought=lambda: sought), created=created
        )
    findings = run_checks(snapshot, matrix)
    lock, lock_origin = _lock(args, ctx, snapshot)
    files = raw_files(root, snapshot) if root is not None else ()
    inputs = report.Inputs(
        snapshot=snapshot,
        findings=tuple(findings),
        lock=lock,
        lock_origin=lock_origin,
        created=created,
        command=command_line(args),
        # The probes run the target interpreter beside npu-smi (two threads): order by program,
        # keeping each program's own calls in the order they ran, so the bundle is deterministic.
        captures=tuple(sorted(recorder.captures, key=lambda c: c.argv[0])),
        files=files,
        redact=args.redact,
        known=known_values(ctx.environ),
        triage=_triage(ctx, args.log, snapshot, matrix) if args.log else None,
        bench=_bench(ctx, args.store, snapshot, files),
    )
    bundle = report.assemble(inputs, render.markdown)
    data = report.pack(bundle)
    common.write_output(ctx, args.output, data, mode=0o644 if args.redact else 0o600, binary=BUNDLE_KIND)
    result = summary(bundle, data, common.output_name(args.output))
    render.written(common.summary_output(ctx, args.output), result["path"], result, args.format)
    return errors.EXIT_OK


def _triage(ctx: common.Context, log: str, snapshot: Snapshot, matrix: object) -> report.LogTriage:
    from ascenv.output import triage as render_triage
    from ascenv.triage import exit_code, open_log, triage

    with open_log(os.path.join(ctx.cwd, log), log) as stream:
        result = triage(stream, snapshot, matrix)
    data = render_triage.to_json(result, exit_code(result))
    return report.LogTriage(log, data, render_triage.markdown(result, log))


def _bench(
    ctx: common.Context, store_option: Optional[str], snapshot: Snapshot, files: tuple[report.RawFile, ...]
) -> report.BenchRuns:
    from ascenv.report.bench import installed_runs
    from ascenv.store import Store

    prefix, suffix = "manifests/", f"/{VENDOR_MANIFEST}"
    manifests = {f.member[len(prefix) : -len(suffix)]: f.data for f in files if f.member.startswith(prefix)}
    found = installed_runs(snapshot, Store(common.store_dir(ctx, store_option)), manifests)
    return report.BenchRuns(found.data(), found.note)


class _Recorder:
    """A ``proc.Runner`` that keeps every command the probes run, with its raw output."""

    def __init__(self, run: proc.Runner) -> None:
        self._run = run
        self.captures: list[report.Capture] = []

    def __call__(self, argv, **kwargs) -> proc.Completed:
        done = self._run(argv, **kwargs)
        self.captures.append(report.Capture(done.argv, done.status, done.returncode, done.stdout, done.stderr))
        return done


def report_time(environ: Mapping[str, str]) -> str:
    """Now, or SOURCE_DATE_EPOCH when set (https://reproducible-builds.org/specs/source-date-epoch/:
    a malformed value is an error, not silently ignored)."""
    value = environ.get("SOURCE_DATE_EPOCH")
    if value is None:
        moment = datetime.datetime.now(datetime.timezone.utc)
    elif value.isdigit():
        moment = datetime.datetime.fromtimestamp(int(value), datetime.timezone.utc)
    else:
        raise errors.UsageError(
            f"SOURCE_DATE_EPOCH={value!r} is not a number of seconds since 1970",
            hint="unset it or set it to e.g. $(date +%s)",
        )
    return moment.replace(microsecond=0).isoformat()


def _lock(args: argparse.Namespace, ctx: common.Context, snapshot: Snapshot) -> tuple[lockfile.Lock, str]:
    from ascenv.lockfile import pinned_images, read_lock

    if args.lock:
        lock, warnings = read_lock(os.path.join(ctx.cwd, args.lock), args.lock)
        for warning in warnings:
            ctx.out.warn(warning)
        return lock, f"read from {args.lock}"
    try:
        images = pinned_images()
    except errors.AscenvError as exc:  # a broken pins file must not cost the user the report
        ctx.out.warn(f"image pins left out of the lock: {exc.message}")
        images = ()
    return lockfile.lock_from_snapshot(
        snapshot, generator_version=__version__, images=images
    ), "generated from snapshot.json"


def raw_files(root: Root, snapshot: Snapshot) -> tuple[report.RawFile, ...]:
    """The version files the snapshot was read from and the vendors' ascenv build manifests, as
    they are on disk (what maintainers otherwise ask for with `cat …install.info`)."""
    paths = [
        snapshot.driver.version_file.path if snapshot.driver.version_file else None,
        snapshot.firmware.version_file.path if snapshot.firmware.version_file else None,
        snapshot.install_info.path if snapshot.install_info else None,
        *(install.info_file for install in snapshot.cann.installs),
        snapshot.vendor_config.path,
    ]
    files: list[report.RawFile] = []
    for path in dict.fromkeys(p for p in paths if p):
        data = root.read_bytes(path)
        if data is not None:
            files.append(report.RawFile(path, data, f"files/{len(files) + 1:02d}-{posixpath.basename(path)}"))
    seen: set[str] = set()
    for vendor in snapshot.vendors:
        data = root.read_bytes(vendor.manifest) if vendor.manifest else None
        if vendor.manifest and data is not None and vendor.name not in seen:
            seen.add(vendor.name)
            files.append(report.RawFile(vendor.manifest, data, f"manifests/{vendor.name}/{VENDOR_MANIFEST}"))
    return tuple(files)


def known_values(environ: Mapping[str, str]) -> report.Known:
    home = environ.get("HOME")
    users = tuple(u for u in (environ.get("USER"), environ.get("LOGNAME")) if u)
    return report.Known(homes=(home,) if home else (), users=tuple(dict.fromkeys(users)), public_hosts=cited_hosts())


def cited_hosts() -> tuple[str, ...]:
    """The hosts of the URLs ascenv's own data cites (compat/*.toml, compat/triage/*.toml: the
    sources of findings and of triage's causes): public, and kept in the bundle."""
    from ascenv import paths
    from ascenv.redact import url_hosts

    found: set[str] = set()
    compat = paths.data_dir("compat")
    for data in (*compat.glob("*.toml"), *compat.glob("triage/*.toml")):
        try:
            found |= url_hosts(data.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue  # a damaged data file is reported by what loads it; here its hosts are hidden
    return tuple(sorted(found))


def command_line(args: argparse.Namespace) -> str:
    words = ["ascenv", "report"]
    if args.from_file:
        words += ["--from", args.from_file]
    else:
        words += ["--root", args.root] if args.root != "/" else []
        words += ["--python", args.python] if args.python else []
    words += ["--lock", args.lock] if args.lock else []
    words += ["--log", args.log] if args.log else []
    words += ["--store", args.store] if args.store else []
    words += [] if args.redact else ["--no-redact"]
    return " ".join(shlex.quote(w) for w in words)


def summary(bundle: report.Bundle, data: bytes, path: str) -> dict:
    import hashlib
    import json

    manifest = json.loads(bundle.members[report.MANIFEST])
    findings = json.loads(bundle.members["findings.json"])
    return {
        "path": path,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "created": bundle.created,
        "redacted": bundle.redacted,
        "redactions": bundle.redactions,
        "summary": findings["summary"],
        "members": [{"name": m["name"], "sha256": m["sha256"], "size": m["size"]} for m in manifest["members"]]
        + [{"name": report.MANIFEST}],
    }
