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
from ascenv.words import counted


@dataclass(frozen=True)
class Options:
    inventory: str
    install_path: Optional[str]  # for hosts without ascenv_install_path
    rollback: bool = True
    clean_cache: bool = False
    require_test: bool = False
    forks: Optional[int] = None
    bench: Optional[rollout.BenchGate] = None  # --fail-over: the bench gate
    bench_recipe: Optional[Path] = None  # the operator's kernel.toml, shipped for the bench gate


def run_rollout(
    journal: rollout.Journal,
    path: Path,
    entry: Entry,
    options: Options,
    environ: Mapping[str, str],
    run: proc.Runner = proc.run,
    tell: Callable[[str], None] = lambda line: None,
) -> rollout.Journal:
    """Step until ``next_step`` says stop; the journal at ``path`` is always the last state known.
    The caller holds the journal's lock, so the controller of every earlier run of this rollout is
    gone: what is left of their playbook runs here (ansible-playbook, its workers and ssh, whose
    results nobody will read) is ended first, and each step has its nodes remove the folders
    those runs left (node_main.sweep, which waits for a step still running there)."""
    runs = path.parent / f"{path.stem}.runs"
    if journal.runs and rollout.next_step(journal).kind != "stop":
        ended = playbook.end_runs(set(journal.runs))
        if ended:
            tell(f"ended {counted(ended, 'process', 'processes')} left by an earlier run of this rollout")
    while True:
        step = rollout.next_step(journal)
        if step.kind == "stop":
            return journal
        earlier = journal.runs
        run_id = playbook.new_run_id()
        journal = rollout.started(journal, step, run_id)
        journal_file.save(path, journal)
        what = f"wave {step.wave + 1}/{len(journal.waves)}" if step.kind == "wave" else "rollback"
        tell(f"{what}: {', '.join(step.hosts)}")
        folder = _new_folder(runs, f"{what.split('/')[0].replace(' ', '-')}")
        action = "apply" if step.kind == "wave" else "rollback"
        _play(folder, step.hosts, action, journal, entry, options, environ, run, tell, run_id, earlier)
        outcomes = []
        for host in step.hosts:
            reached, message, envelope = results.read_step(folder, host)
            report = envelope.get("rollout") if envelope else None
            if step.kind == "wave":
                outcome = rollout.judge_apply(
                    host, reached, message, report, journal.key, options.require_test, options.bench
                )
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
    run_id: str,
    sweep: tuple[str, ...],
) -> None:
    work = Path(tempfile.mkdtemp(prefix="ascenv-rollout-"))
    try:
        payload = node_payload(work, action, journal, entry, options.clean_cache, sweep, options.bench is not None)
        if action == "apply" and options.bench is not None and options.bench_recipe is not None:
            payload[f"recipe/{journal.op}/kernel.toml"] = options.bench_recipe
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
            run_id=run_id,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def node_payload(
    work: Path,
    action: str,
    journal: rollout.Journal,
    entry: Entry,
    clean_cache: bool,
    sweep: tuple[str, ...] = (),
    bench: bool = False,
) -> dict[str, Path]:
    """What the bundle carries for the node's ``action`` (apply, rollback): the step, in
    ``work/rollout.json`` (with ``sweep``, the earlier runs whose folders the node removes, and
    ``bench``, whether the node runs the bench gate's edge), and
    for apply the stored build, its manifest and outputs (what ``install`` verifies before it
    runs anything)."""
    spec = {
        "action": action,
        "op": journal.op,
        "key": journal.key,
        "vendors": list(journal.vendors),
        "sweep": list(sweep),
    }
    (work / "rollout.json").write_text(json.dumps({**spec, "clean_cache": clean_cache, "bench": bench}))
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
