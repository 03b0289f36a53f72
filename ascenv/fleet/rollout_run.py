"""`ascenv fleet rollout` on Ansible: each step ``rollout.next_step`` decides is one run of the
fleet playbook over the step's hosts, with a bundle that carries the build and the node's part
(node_main ``_rollout``); the journal is saved before and after each step."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ascenv import errors, proc
from ascenv.fleet import journal as journal_file
from ascenv.fleet import playbook, results, rollout
from ascenv.store import MANIFEST, Entry


@dataclass(frozen=True)
class Options:
    inventory: str
    install_path: Optional[str]  # for hosts without ascenv_install_path
    rollback: bool = True
    clean_cache: bool = False
    require_test: bool = False
    forks: Optional[int] = None


def run_rollout(
    journal: rollout.Journal,
    path: Path,
    entry: Entry,
    options: Options,
    environ: Mapping[str, str],
    run: proc.Runner = proc.run,
    tell: Callable[[str], None] = lambda line: None,
) -> rollout.Journal:
    """Step until ``next_step`` says stop; the journal at ``path`` is always the last state known."""
    runs = path.parent / f"{path.stem}.runs"
    while True:
        step = rollout.next_step(journal)
        if step.kind == "stop":
            return journal
        journal = rollout.started(journal, step)
        journal_file.save(path, journal)
        what = f"wave {step.wave + 1}/{len(journal.waves)}" if step.kind == "wave" else "rollback"
        tell(f"{what}: {', '.join(step.hosts)}")
        folder = _new_folder(runs, f"{what.split('/')[0].replace(' ', '-')}")
        action = "apply" if step.kind == "wave" else "rollback"
        _play(folder, step.hosts, action, journal, entry, options, environ, run, tell)
        outcomes = []
        for host in step.hosts:
            reached, message, envelope = results.read_step(folder, host)
            report = envelope.get("rollout") if envelope else None
            if step.kind == "wave":
                outcome = rollout.judge_apply(host, reached, message, report, journal.key, options.require_test)
            else:
                outcome = rollout.judge_rollback(host, reached, message, report, journal.key)
            outcomes.append(outcome)
        if step.kind == "wave":
            journal = rollout.after_wave(journal, step, outcomes, rollback=options.rollback)
        else:
            journal = rollout.after_rollback(journal, step, outcomes)
        journal_file.save(path, journal)


def _new_folder(runs: Path, name: str) -> Path:
    runs.mkdir(parents=True, exist_ok=True)
    number = sum(1 for _ in runs.iterdir()) + 1
    folder = runs / f"{number:03d}-{name}"
    folder.mkdir()
    return folder


def _play(
    folder: Path,
    hosts: tuple[str, ...],
    action: str,
    journal: rollout.Journal,
    entry: Entry,
    options: Options,
    environ: Mapping[str, str],
    run: proc.Runner,
    tell: Callable[[str], None],
) -> None:
    work = Path(tempfile.mkdtemp(prefix="ascenv-rollout-"))
    try:
        payload = node_payload(work, action, journal, entry, options.clean_cache)
        extra: dict[str, object] = {"ascenv_rollout": True}
        if options.install_path:
            extra["ascenv_default_install_path"] = {"__ansible_unsafe": options.install_path}
        playbook.run_audit(
            options.inventory,
            folder,
            environ,
            run=run,
            payload=payload,
            extra_vars=extra,
            limit=",".join(hosts),
            forks=options.forks,
            on_node=lambda host: tell(f"{host}: done"),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def node_payload(work: Path, action: str, journal: rollout.Journal, entry: Entry, clean_cache: bool) -> dict[str, Path]:
    """What the bundle carries for the node's ``action`` (apply, rollback): the step, in
    ``work/rollout.json``, and for apply the stored build, its manifest and outputs (what
    ``install`` verifies before it runs anything)."""
    spec = {"action": action, "op": journal.op, "key": journal.key, "vendors": list(journal.vendors)}
    (work / "rollout.json").write_text(json.dumps({**spec, "clean_cache": clean_cache}))
    payload = {"rollout.json": work / "rollout.json"}
    if action == "apply":
        base = f"store/{entry.op}/{entry.key}"
        payload.update({f"{base}/{MANIFEST}": entry.path / MANIFEST, f"{base}/outputs": entry.outputs})
    return payload


def default_journal(cwd: str, op: str, key: str) -> Path:
    """The same rollout's journal on every run: ./ascenv-fleet-rollout/<op>-<key 12>.json."""
    return Path(cwd) / "ascenv-fleet-rollout" / f"{op}-{key[:12]}.json"


def hosts_and_groups(inventory: str, environ: Mapping[str, str], run: proc.Runner) -> dict[str, tuple[str, ...]]:
    groups = rollout.inventory_groups(playbook.inventory_list(inventory, environ, run))
    if not groups.get("all"):
        raise errors.UsageError(f"the inventory {inventory} names no host")
    return groups
