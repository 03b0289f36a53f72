"""The node-side step: the ``__main__`` of the bundle ``ascenv fleet`` ships to every node.

It runs under the node's own Python, so it is kept to the standard library and to syntax old
Pythons parse (3.6+): on a Python older than ascenv needs it reports that, as data, instead of
failing with a SyntaxError. It extracts the bundle beside itself (in Ansible's per-task temporary
directory, which Ansible removes), runs ``ascenv snapshot --format json`` and, when the bundle
carries a cluster lock, ``ascenv lock --check LOCK --from SNAPSHOT --format json``, and prints one
JSON envelope on stdout. Usage: ``python3 bundle.pyz [--root DIR] [--python PATH]``."""

import io
import json
import os
import shutil
import sys
import tempfile
import zipfile

ENVELOPE = 1
NEEDS = (3, 9)  # ascenv's requires-python


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
        envelope["error"] = "node Python {} ({}) is older than {}.{}, which ascenv needs to run here".format(
            envelope["python"], sys.executable, NEEDS[0], NEEDS[1]
        )
        print(json.dumps(envelope))
        return 3
    bundle = os.path.abspath(sys.argv[0])
    work = tempfile.mkdtemp(prefix="ascenv-node-", dir=os.path.dirname(bundle))
    try:
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(work)
        sys.path.insert(0, os.path.join(work, "lib"))
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
