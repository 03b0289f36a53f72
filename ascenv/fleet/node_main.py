"""The node-side step: the ``__main__`` of the bundle ``ascenv fleet`` ships to every node.

It runs under the node's own Python, so it is kept to the standard library and to syntax old
Pythons parse (3.6+): on a Python too old for the probe it reports that, as data, instead of
failing with a SyntaxError. It extracts the bundle beside itself (in Ansible's per-task temporary
directory, which Ansible removes), runs ``ascenv snapshot --format json`` and, when the bundle
carries a cluster lock, ``ascenv lock --check LOCK --from SNAPSHOT --format json``, and prints one
JSON envelope on stdout. Usage: ``python3 bundle.pyz [--root DIR] [--python PATH]``.

An Ascend host may have only its OS's Python, as old as 3.7: a newer python3.N on PATH is used
when there is one, else the probe itself runs on the old Python (the probe and ``ascenv.serde``
are kept 3.7-compatible; the fleet tests audit a 3.7 node), without the command line (the rest
of ascenv needs 3.9); the cluster lock is then checked on the controller only, which judges every
node against it anyway."""

import io
import json
import os
import shutil
import sys
import tempfile
import zipfile

ENVELOPE = 1
NEEDS = (3, 9)  # ascenv's requires-python: the command line, `ascenv snapshot` and `lock --check`
PROBE_NEEDS = (3, 7)  # the probe alone (dataclasses, `from __future__ import annotations`)


def _run(argv):
    from ascenv import cli

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = cli.main(argv)
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def _newer_python():
    """A python3.N >= NEEDS on the node's PATH, newest first (None when there is none)."""
    for minor in range(20, NEEDS[1] - 1, -1):
        for directory in os.environ.get("PATH", "").split(os.pathsep):
            candidate = os.path.join(directory or ".", f"python3.{minor}")
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def _probe_only(envelope, argv, has_lock):
    """What ``ascenv snapshot --format json`` prints, from the probe itself (see the docstring)."""
    import argparse

    from ascenv import proc
    from ascenv.probe.fs import Root
    from ascenv.probe.snapshot import collect
    from ascenv.snapshot_io import snapshot_to_json

    parser = argparse.ArgumentParser(prog="ascenv-node")
    parser.add_argument("--root", default="/")
    parser.add_argument("--python")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.root):
        envelope["error"] = f"--root {args.root} is not a directory on the node"
        print(json.dumps(envelope))
        return 1
    snapshot = collect(Root(args.root), dict(os.environ), proc.run, python=args.python)
    envelope["snapshot_exit"] = 0
    envelope["snapshot"] = snapshot_to_json(snapshot)
    if has_lock:
        envelope["check_error"] = (
            "node Python {} runs the probe only: the cluster lock is checked on the controller".format(
                envelope["python"]
            )
        )
    print(json.dumps(envelope))
    return 0


def main(argv):
    envelope = {
        "ascenv_node": ENVELOPE,
        "python": "{}.{}.{}".format(*sys.version_info[:3]),
        "executable": sys.executable,
    }
    if sys.version_info < NEEDS:
        newer = _newer_python()
        if newer:  # the snapshot still reads python3 on PATH (this old one) as the target Python
            os.execv(newer, [newer, os.path.abspath(sys.argv[0])] + argv)
    if sys.version_info < PROBE_NEEDS:
        envelope["error"] = "node Python {} ({}) is older than {}.{}, which ascenv's probe needs".format(
            envelope["python"], sys.executable, PROBE_NEEDS[0], PROBE_NEEDS[1]
        )
        print(json.dumps(envelope))
        return 3
    bundle = os.path.abspath(sys.argv[0])
    work = tempfile.mkdtemp(prefix="ascenv-node-", dir=os.path.dirname(bundle))
    try:
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(work)
        sys.path.insert(0, os.path.join(work, "lib"))
        if sys.version_info < NEEDS:
            try:
                return _probe_only(envelope, argv, os.path.exists(os.path.join(work, "cluster.lock")))
            except Exception as exc:  # noqa: BLE001 - the node's answer is data for the controller
                envelope["error"] = f"the probe failed on Python {envelope['python']}: {type(exc).__name__}: {exc}"
                print(json.dumps(envelope))
                return 1
        code, out, err = _run(["snapshot", "--format", "json"] + argv)
        envelope["snapshot_exit"] = code
        if code != 0:
            envelope["error"] = err.strip() or f"ascenv snapshot exited {code}"
            print(json.dumps(envelope))
            return 1
        envelope["snapshot"] = json.loads(out)
        lock = os.path.join(work, "cluster.lock")
        if os.path.exists(lock):
            snapshot = os.path.join(work, "snapshot.json")
            with open(snapshot, "w") as handle:
                handle.write(out)
            code, out, err = _run(["lock", "--check", lock, "--from", snapshot, "--format", "json"])
            envelope["check_exit"] = code
            envelope["check"] = json.loads(out) if out.strip() else None
            if err.strip():
                envelope["check_error"] = err.strip()
        print(json.dumps(envelope))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
