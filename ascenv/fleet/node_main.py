"""The node-side step: the ``__main__`` of the bundle ``ascenv fleet`` ships to every node.

It runs under the node's own Python, so it is kept to the standard library and to syntax old
Pythons parse (3.6+): on a Python too old for the probe it reports that, as data, instead of
failing with a SyntaxError. It extracts the bundle beside itself (in Ansible's per-task temporary
directory, which Ansible removes), runs ``ascenv snapshot --format json`` and, when the bundle
carries a cluster lock, ``ascenv lock --check LOCK --from SNAPSHOT --format json``, and prints one
JSON envelope on stdout. Usage: ``python3 bundle.pyz [--root DIR] [--python PATH]``.

A bundle of ``ascenv fleet rollout`` carries ``rollout.json`` (the step) and the stored build
(``store/<op>/<key>/``) instead: the node installs the build with ``ascenv install`` (which keeps
the vendor it replaces) and reports its gates, or rolls it back with ``install --rollback``; both
are idempotent, so a rerun after a killed controller repeats nothing (``_rollout``). Usage then:
``python3 bundle.pyz --install-path DIR [--root DIR]``.

An Ascend host may have only its OS's Python, as old as 3.7: a newer python3.N on PATH is used
when there is one, else the probe itself runs on the old Python (the probe and ``ascenv.serde``
are kept 3.7-compatible; the fleet tests audit a 3.7 node), without the command line (the rest
of ascenv needs 3.9); the cluster lock is then checked on the controller only, which judges every
node against it anyway."""

import io
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import zipfile

ENVELOPE = 1
# the directory of a run on the node, as the playbook names it (ascenv_leaf): ascenv-<run id>-<host index>
RUN_DIR = re.compile(r"^ascenv-([0-9a-f]{12})-([0-9]+)$")
STEP_LOCK = ".ascenv-node.lock"  # in the run's directory, flocked by its step while it runs
MADE_TMP = ".ascenv-made-tmp"  # in the run's directory: its run made the remote tmp (removed when empty)
_held = []  # type: list  # the step lock's descriptor, kept open (and locked) until the process ends
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
    _hold_step_lock(run_dir_of(bundle))
    work = tempfile.mkdtemp(prefix="ascenv-node-", dir=os.path.dirname(bundle))
    try:
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(work)
        sys.path.insert(0, os.path.join(work, "lib"))
        spec = os.path.join(work, "rollout.json")
        if os.path.exists(spec):
            return _rollout(envelope, spec, argv, work)
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


def _rollout(envelope, spec_path, argv, work):
    """Install the shipped build (``apply``) and report the gates, or roll it back (``rollback``);
    the controller judges what is reported (ascenv.fleet.rollout). Each vendor's live build is
    read from its ascenv-manifest.toml before anything is done: a build already live is not
    installed again (that would replace the kept previous vendor with the build itself), and a
    vendor not at the build is not rolled back (that would swap the previous one out again)."""
    import argparse

    with open(spec_path) as handle:
        spec = json.load(handle)
    parser = argparse.ArgumentParser(prog="ascenv-node")
    parser.add_argument("--root", default="/")
    parser.add_argument("--python")
    parser.add_argument("--install-path", default="")
    args = parser.parse_args(argv)
    report = {"action": spec["action"]}
    envelope["rollout"] = report
    if sys.version_info < NEEDS:
        envelope["error"] = "node Python {} cannot run ascenv install (it needs {}.{})".format(
            envelope["python"], NEEDS[0], NEEDS[1]
        )
    elif not args.install_path.startswith("/"):
        envelope["error"] = "no absolute install path for this node: set its ascenv_install_path or pass --install-path"
    if "error" in envelope:
        print(json.dumps(envelope))
        return 1
    # a controller killed mid-wave drops the connection, and the hang-up would cut the install
    # short, the vendor tree half merged (signals.termination_as_interrupt leaves an ignored
    # signal ignored, as under nohup): the step finishes on its own, and the next run finds the
    # build live. `timeout`'s SIGTERM still ends a step that hangs.
    import signal

    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    real = os.path.join(args.root, args.install_path.lstrip("/"))
    vendors = spec["vendors"]
    # the temporary folders of earlier runs of this rollout whose controller is gone (the
    # controller ends their processes and names them), once the step each may still run has ended
    report["swept"], kept = sweep(run_dir_of(os.path.abspath(sys.argv[0])), spec.get("sweep") or ())
    if kept:
        report["sweep_kept"] = kept
    _wait_for_installs(real)  # one still running (from a killed controller's run) is finished first
    report["live_before"] = _live_keys(real, vendors)
    if spec["action"] == "rollback":
        report["rolled_back"] = []
        for vendor in vendors:
            if report["live_before"].get(vendor) != spec["key"]:
                continue
            code, out, err = _run(["install", "--rollback", vendor, "--install-path", real, "--format", "json"])
            if code != 0:
                report["error"] = _said(err) or f"install --rollback exited {code}"
                break
            report["rolled_back"].append(vendor)
    elif all(report["live_before"].get(v) == spec["key"] for v in vendors):
        report["installed"] = False
    else:
        store = os.path.join(work, "store")
        argv = ["install", spec["op"], "--key", spec["key"], "--install-path", real, "--store", store]
        kept_before = {v: _identity(os.path.join(real, ".ascenv-previous", v)) for v in vendors}
        code, out, err = _run(argv + ["--format", "json"])
        report["installed"] = code == 0
        if code != 0:
            report["error"] = _said(err) or f"ascenv install exited {code}"
            report["restored"] = _restore(real, vendors, kept_before, report["live_before"])
    report["live_after"] = _live_keys(real, vendors)
    if spec["action"] == "apply" and "error" not in report:
        paths = [args.install_path.rstrip("/") + "/vendors/" + v for v in vendors]
        report["vendor_paths"] = paths
        report["op_check"] = _op_check(args.root, paths)
        if spec.get("clean_cache"):
            report["cleaned"] = _clean_stale(report["op_check"])
            if report["cleaned"]:
                report["op_check"] = _op_check(args.root, paths)
        report["test"] = _test(spec, work)
        if spec.get("bench"):
            report["bench"] = _bench(spec, work)
    try:
        print(json.dumps(envelope))
    except OSError:  # nobody is listening any more (see the hang-up above)
        pass
    return 0


def run_dir_of(bundle):
    """The run's own directory on the node when the bundle is where the playbook puts it
    (``<remote tmp>/ascenv-<run>-<n>/ansible-tmp-…/bundle``), else None (run by hand)."""
    tmp = os.path.dirname(bundle)
    run_dir = os.path.dirname(tmp)
    if os.path.basename(tmp).startswith("ansible-tmp-") and RUN_DIR.match(os.path.basename(run_dir)):
        return run_dir
    return None


def _hold_step_lock(run_dir):
    """An exclusive flock on the run directory's STEP_LOCK for as long as this step runs (the
    kernel drops it when the process ends, SIGKILL included): a later run's sweep never removes
    the folder of a step still running."""
    if run_dir is None:
        return
    try:
        import fcntl

        fd = os.open(os.path.join(run_dir, STEP_LOCK), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.append(fd)
    except (OSError, ImportError):  # pragma: no cover - a node without flock: its folder is never swept
        pass


def sweep(own, dead, wait=120.0):
    """Remove the folders earlier runs of this rollout left in the remote tmp (``own``'s parent):
    only directories named RUN_DIR of a run id in ``dead`` (runs of this rollout the controller
    ended), never ``own``'s run, never a symlink or another user's, each once the step that may
    still run in it has let go of its STEP_LOCK (waited for up to ``wait`` seconds). Returns the
    names removed and, for each one kept, why. Where ascenv made the remote tmp, the mark is
    moved to ``own`` so the playbook's last task removes the remote tmp when it is empty."""
    import fcntl

    if own is None or not dead:
        return [], []
    own_match = RUN_DIR.match(os.path.basename(own))
    if own_match is None:
        return [], []
    dead = {d for d in dead if isinstance(d, str) and d != own_match.group(1)}
    tmp = os.path.dirname(own)
    removed, kept = [], []
    try:
        names = sorted(os.listdir(tmp))
    except OSError as exc:
        return [], [f"{tmp}: {exc.strerror or exc}"]
    for name in names:
        found = RUN_DIR.match(name)
        if not found or found.group(1) not in dead:
            continue
        path = os.path.join(tmp, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            kept.append(f"{name}: not a directory of this user")
            continue
        try:
            fd = os.open(os.path.join(path, STEP_LOCK), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = None  # its step never started, and never will (its run is over)
        except OSError as exc:
            kept.append(f"{name}: its step lock cannot be read: {exc.strerror or exc}")
            continue
        try:
            if fd is not None and not _locked_within(fd, wait, fcntl):
                kept.append(f"{name}: a step still runs in it after {wait:.0f} s")
                continue
            made = os.path.isfile(os.path.join(path, MADE_TMP)) and not os.path.islink(os.path.join(path, MADE_TMP))
            shutil.rmtree(path)  # never follows a symlink (fd-based on Linux)
            removed.append(name)
            if made:
                open(os.path.join(own, MADE_TMP), "a").close()
        except OSError as exc:
            kept.append(f"{name}: {exc.strerror or exc}")
        finally:
            if fd is not None:
                os.close(fd)
    return removed, kept


def _locked_within(fd, wait, fcntl):
    end = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= end:
                return False
            time.sleep(0.2)


def _identity(path):
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


def _restore(real, vendors, kept_before, live_before):
    """After a failed install, the vendors back at the build that was live before. ``ascenv
    install`` puts back what a failed installer merged into the live tree itself (the keep is
    then the one from before, or none); should a keep still be new since (an ascenv that did not
    undo it), ``install --rollback`` puts it back here. A keep from an earlier install (the
    install failed before keeping) is left alone."""
    restored = []
    live_now = _live_keys(real, vendors)
    for vendor in vendors:
        now = _identity(os.path.join(real, ".ascenv-previous", vendor))
        if now is None or now == kept_before.get(vendor):
            if live_before.get(vendor) is not None and live_now.get(vendor) == live_before.get(vendor):
                restored.append(vendor)
            continue
        code, out, err = _run(["install", "--rollback", vendor, "--install-path", real, "--format", "json"])
        if code == 0:
            restored.append(vendor)
    return restored


def _wait_for_installs(real):
    from pathlib import Path

    from ascenv.package import deploy

    try:
        with deploy.locked(Path(real), create=False):
            pass
    except Exception:  # noqa: BLE001 - install reports what is wrong with the path, in its words
        pass


def _live_keys(real, vendors):
    """The build key each vendor's ascenv-manifest.toml names (None: no vendor, or no manifest)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python < 3.11
        import tomli as tomllib

    keys = {}  # type: dict
    for vendor in vendors:
        try:
            with open(os.path.join(real, "vendors", vendor, "ascenv-manifest.toml"), "rb") as handle:
                keys[vendor] = str(tomllib.load(handle).get("key"))
        except (OSError, ValueError):
            keys[vendor] = None
    return keys


def _op_check(root, paths):
    """``ascenv op check --format json`` as the node's processes see the vendors: its login
    ASCEND_CUSTOM_OPP_PATH as it is when it names the new vendor directories, else with them
    put first, as the vendor's bin/set_env.bash does (CANN's install.sh writes it for
    --install-path installs)."""
    entries = [e for e in os.environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":") if e]
    missing = [p for p in paths if p not in entries]
    saved = os.environ.get("ASCEND_CUSTOM_OPP_PATH")
    os.environ["ASCEND_CUSTOM_OPP_PATH"] = ":".join(missing + entries)
    try:
        code, out, err = _run(["op", "check", "--root", root, "--format", "json"])
    finally:
        if saved is None:
            del os.environ["ASCEND_CUSTOM_OPP_PATH"]
        else:
            os.environ["ASCEND_CUSTOM_OPP_PATH"] = saved
    try:
        doc = json.loads(out)
    except ValueError:
        return {"error": _said(err) or f"op check exited {code}"}
    doc["set_env_assumed"] = missing
    return doc


def _clean_stale(doc):
    """Run the exact clean-up command of each ASC-VENDOR-STALE-CACHE finding; what was run."""
    import shlex

    ran = []
    for found in doc.get("findings", []):
        command = found.get("fix", "")
        if found.get("id") != "ASC-VENDOR-STALE-CACHE" or not command.startswith("ascenv clean-cache "):
            continue  # under a --root the finding says where to run it instead: nothing is run here
        if command not in ran:
            _run(shlex.split(command)[1:])
            ran.append(command)
    return ran


def _test(spec, work):
    """``ascenv test OP --build KEY --format json`` (exit 0 pass, 1 fail) when the shipped ascenv
    has that command; otherwise why it is not checkable."""
    from ascenv import cli

    if "test" not in [c.name for c in cli.command_specs()]:
        return {"status": "not-checkable", "detail": "the ascenv shipped to the node has no `test` command"}
    store = os.path.join(work, "store")
    code, out, err = _run(["test", spec["op"], "--build", spec["key"], "--store", store, "--format", "json"])
    if code in (0, 1):
        return {"status": "pass" if code == 0 else "fail", "detail": _said(err) or out.strip()[-500:]}
    return {"status": "not-checkable", "detail": _said(err) or f"ascenv test exited {code}"}


def _bench(spec, work):
    """The bench gate's edge (--fail-over): the node's baseline run of the operator's npu target,
    from the node's own store (``$ASCENV_STORE``, relative to the login's $HOME, else
    ``~/.ascenv/store``: where ``ascenv bench baseline set`` run in the home keeps it), and a
    run of the new build's NPU benchmark, ``ascenv bench run OP --target npu`` (exit 5 with the
    commands instead where the node has no NPU or no msprof). Both runs as data, or why there
    are none; the controller compares them (rollout.judge_bench)."""
    from pathlib import Path

    from ascenv.bench.store import BenchStore, loads_run, read_run_text, run_data
    from ascenv.store import Store

    op = spec["op"]
    home = os.environ.get("HOME") or os.path.expanduser("~")
    node_store = os.path.join(home, os.environ.get("ASCENV_STORE") or os.path.join(".ascenv", "store"))
    try:
        bench = BenchStore(Store(Path(node_store)))
        chosen = bench.baselines(op).get("npu")
        baseline = bench.resolve(chosen, op, "npu").run if chosen else None
    except Exception as exc:  # noqa: BLE001 - the node's answer is data for the controller
        return {"detail": f"the node's baseline of {op} does not read: {_said(str(exc))}"}
    if baseline is None:
        return {
            "detail": f"no npu baseline of {op} in the node's store {node_store}: run `ascenv bench baseline set RUN`"
            " there"
        }
    store = os.path.join(work, "store")
    recipes = os.path.join(work, "recipe")  # <op>/kernel.toml, shipped by the controller
    if not os.path.isfile(os.path.join(recipes, op, "kernel.toml")):
        return {"baseline": run_data(baseline), "detail": f"the controller shipped no recipe of {op}"}
    recipe_dir = os.path.join(recipes, op)  # `bench run` takes OP as a directory holding kernel.toml
    code, out, err = _run(
        ["bench", "run", recipe_dir, "--target", "npu", "--build", spec["key"], "--store", store, "--format", "json"]
    )
    found = {"baseline": run_data(baseline)}  # type: dict
    try:
        doc = json.loads(out)
    except ValueError:
        doc = {}
    if code != 0 or not doc.get("path"):
        reason = doc.get("reason") or _said(err) or f"ascenv bench run exited {code}"
        found["detail"] = f"the new build's NPU benchmark did not run: {reason}"
        return found
    try:
        new = loads_run(read_run_text(Path(doc["path"])), doc["path"])
    except Exception as exc:  # noqa: BLE001
        found["detail"] = f"the new build's bench run does not read: {_said(str(exc))}"
        return found
    found["run"] = run_data(new)
    try:
        found["history"] = earlier_runs(bench, baseline, new)
    except Exception:  # noqa: BLE001 - without them the noise between runs is said to be unmeasured
        pass
    return found


def earlier_runs(bench, baseline, new):
    """The node's stored runs the noise between runs of one build is read from, as data: what
    ``bench compare`` reads on a machine (``stats.in_history`` of the baseline and the new run,
    the newest ``stats.HISTORY``), so the controller's gate sees that noise too."""
    from ascenv.bench.stats import HISTORY, in_history
    from ascenv.bench.store import run_data

    def wanted(run):
        return in_history(baseline, new, run)

    return [run_data(run) for run in bench.up_to(baseline.op, new, wanted, HISTORY)]


def _said(text):
    """What a command wrote on stderr, on one line (its error and its hint; the line breaks the
    output escapes as \\x0a included): its start and its end, where the cause usually is."""
    said = " ".join((text or "").replace("\\x0a", " ").split())
    return said if len(said) <= 600 else said[:200] + " ... " + said[-400:]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
