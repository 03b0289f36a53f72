"""Run the shipped playbook with ansible-core's own ``ansible-playbook`` (a subprocess through
ascenv.proc): Ansible does the fan-out, the SSH, forks, serial and --limit as its users expect."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ascenv import errors, paths, proc
from ascenv.fleet.bundle import build_bundle
from ascenv.fleet.results import RESULT, host_key, played_hosts

PLAYBOOK = "audit.yml"
RUN_MARK = "ASCENV_FLEET_RUN"  # in ansible-playbook's environment: its run id, to find what it started
# ansible-playbook's own exit codes (ansible/cli/playbook.py, TaskQueueManager.RUN_*): 0 ok,
# 2 some host failed, 4 some host unreachable; the playbook ignores both, so others are its errors.
_HOST_CODES = (0, 2, 4)


@dataclass(frozen=True)
class PlaybookRun:
    results: Path  # one folder per host of the play (results.host_key), each with result.json
    completed: proc.Completed


def ansible_playbook(environ: Mapping[str, str], tool: str = "ansible-playbook") -> str:
    """ansible-playbook (or another tool of ansible-core) on PATH, else beside this Python (a venv
    not activated)."""
    found = proc.which(tool, environ.get("PATH"))
    beside = Path(sys.executable).parent / tool
    if found:
        return found
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    raise errors.ToolMissing(
        f"{tool} is not installed", hint="install ansible-core on the controller: pip install ansible-core"
    )


def inventory_list(inventory: str, environ: Mapping[str, str], run: proc.Runner = proc.run) -> dict:
    """``ansible-inventory -i INVENTORY --list``: every group with its hosts, as Ansible reads it."""
    done = run(
        [ansible_playbook(environ, "ansible-inventory"), "-i", inventory, "--list"], timeout=300, env=dict(environ)
    )
    try:
        doc = json.loads(done.stdout) if done.ok else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise errors.InputError(
            f"ansible-inventory could not read {inventory}: "
            + (proc.last_line(done.stderr or done.stdout) or done.result),
            hint="check the inventory: ansible-inventory -i INVENTORY --graph",
        )
    return doc


def run_audit(
    inventory: str,
    results: Path,
    environ: Mapping[str, str],
    *,
    run: proc.Runner = proc.run,
    cluster_lock: Optional[str] = None,
    payload: Optional[Mapping[str, Path]] = None,
    extra_vars: Optional[Mapping[str, object]] = None,
    limit: Optional[str] = None,
    forks: Optional[int] = None,
    serial: Optional[int] = None,
    timeout: float = 24 * 3600,
    on_node: Optional[Callable[[str], None]] = None,
    run_id: Optional[str] = None,
) -> PlaybookRun:
    """The playbook over ``inventory``; each node's outcome lands in ``results/<host key>/result.json``
    (results.host_key). ``on_node(host)`` is called as each node's result arrives (from a watching
    thread). The bundle's temporary folder is removed however the run ends (an interrupt, or
    SIGTERM under signals.termination_as_interrupt, included). ``run_id`` (new_run_id) names the
    run's directory on each node; a new one when not given."""
    try:
        results.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="ascenv-fleet-"))
    except OSError as exc:
        raise errors.InputError(
            f"cannot make a folder for the audit: {exc.filename}: {exc.strerror}",
            hint="pass -o DIR in a writable place (and a writable TMPDIR for the bundle)",
        ) from None
    run_id = run_id or new_run_id()
    completed: Optional[proc.Completed] = None
    try:
        bundle = build_bundle(work / "ascenv-node.pyz", cluster_lock, payload)
        argv = [ansible_playbook(environ), "-i", inventory, str(paths.data_dir("ansible") / PLAYBOOK)]
        # JSON, not key=value (which splits at spaces), each path marked unsafe: data, never a
        # template (https://docs.ansible.com/ansible/latest/playbook_guide/playbooks_advanced_syntax.html);
        # the run id names this run's own directory on each node
        extra: dict[str, object] = {"ascenv_bundle": _data(str(bundle)), "ascenv_results": _data(str(results))}
        extra["ascenv_run"] = run_id
        extra.update(extra_vars or {})
        argv += ["-e", json.dumps(extra)]
        if serial:
            argv += ["-e", f"ascenv_serial={serial}"]
        if limit:
            argv += ["--limit", limit]
        if forks:
            argv += ["--forks", str(forks)]
        env = {**environ, "ANSIBLE_LOCAL_TEMP": str(work / "local"), "ANSIBLE_RETRY_FILES_ENABLED": "false"}
        env[RUN_MARK] = run_id
        env.setdefault("ANSIBLE_HOST_KEY_CHECKING", environ.get("ANSIBLE_HOST_KEY_CHECKING", "true"))
        done = threading.Event()
        watcher = threading.Thread(target=_watch, args=(results, done, on_node), daemon=True)
        if on_node is not None:
            watcher.start()
        try:
            completed = run(argv, timeout=timeout, env=env)
        finally:
            done.set()
            if on_node is not None:
                watcher.join()
    finally:
        if completed is None or completed.status == proc.TIMEOUT:  # interrupted, or given up on
            end_leftovers(run_id)
        shutil.rmtree(work, ignore_errors=True)
    why = proc.last_line(completed.stderr or completed.stdout)
    if completed.status == proc.NOT_FOUND:
        raise errors.ToolMissing(f"ansible-playbook could not be run: {why}", hint="pip install ansible-core")
    if not completed.ok and completed.returncode not in _HOST_CODES:
        raise errors.InputError(
            f"ansible-playbook failed ({completed.result}): {why}",
            hint="check the inventory (-i) and the --limit pattern; ansible-playbook -i INVENTORY --list-hosts",
        )
    return PlaybookRun(results, completed)


def _data(text: str) -> dict[str, str]:
    """``text`` as an extra var Ansible never templates (its JSON form of ``!unsafe``)."""
    return {"__ansible_unsafe": text}


def new_run_id() -> str:
    """A run's id: 12 hex digits (the node's directory ascenv-<id>-<n>, node_main.RUN_DIR)."""
    return uuid.uuid4().hex[:12]


def end_leftovers(run_id: str, grace: float = 2.0) -> None:
    end_runs({run_id}, grace)


def end_runs(run_ids: Collection[str], grace: float = 2.0) -> int:
    """End every process of this run that outlived ansible-playbook's process group: Ansible's
    workers start sessions of their own (os.setsid in ansible/executor/process/worker.py), so the
    group kill of proc.run misses them and their ssh clients, which wait for a hung node step.
    They are found by the run's mark in their environment (inherited by every descendant; a
    process of another user, whose environment cannot be read, is not ours). How many were found."""
    import psutil

    if not run_ids:
        return 0
    ours = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(RUN_MARK) in run_ids:
                ours.append(process)
        except (psutil.Error, OSError):
            continue
    for process in ours:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(ours, timeout=grace)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=grace)
    return len(ours)


def last_words(completed: proc.Completed) -> str:
    """ansible-playbook's own reason: its last ERROR or WARNING line, else its last line."""
    lines = (completed.stderr + "\n" + completed.stdout).splitlines()
    flagged = [line.strip() for line in lines if line.lstrip().startswith(("ERROR", "[ERROR", "[WARNING", "skipping"))]
    return flagged[-1] if flagged else proc.last_line(completed.stdout) or completed.result


def _watch(results: Path, done: threading.Event, on_node: Optional[Callable[[str], None]]) -> None:
    seen: set[str] = set()
    names: dict[str, str] = {}  # host key -> host, once the playbook wrote the play's hosts
    while True:
        finished = done.wait(0.2)
        if not names:
            try:
                names = {host_key(h): h for h in played_hosts(results) or ()}
            except errors.AscenvError:  # being written: read again on the next round
                pass
        for entry in sorted(results.iterdir()) if results.is_dir() else ():
            if entry.name not in seen and (entry / RESULT).is_file():
                seen.add(entry.name)
                if on_node is not None:
                    on_node(names.get(entry.name, entry.name))
        if finished:
            return
