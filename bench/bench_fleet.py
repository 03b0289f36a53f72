"""`ascenv fleet audit` against its floors:

1. per-node cost over Ansible's own ``ping`` module on the same inventory (5 real sshd nodes on
   127.0.0.1, tests/fleet/sshnodes.py): the audit's wall time / ``ansible -m ping``'s, reported as a
   ratio (the audit adds one bundle transfer and one snapshot per node);
2. the controller's fold of 1,000 fetched results (read result.json, build the locks, group,
   verdicts): < 2 s.

    .venv/bin/python bench/bench_fleet.py   (as root: the nodes' sshd logs in as root)
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from ascenv import proc  # noqa: E402
from ascenv.fleet import results, verdicts  # noqa: E402
from ascenv.fleet.playbook import run_audit  # noqa: E402
from tests.fleet.conftest import _controller_env, _inventory  # noqa: E402
from tests.fleet.sshnodes import client_key, fixture_nodes, ssh_config, sshd_available, stop_node  # noqa: E402

FOLD_S = 2.0
NODES = 5


def fold(folder: Path) -> float:
    start = time.perf_counter()
    verdicts.audit(results.read_results(folder))
    return time.perf_counter() - start


def fake_results(folder: Path, envelope: str, count: int) -> None:
    record = json.dumps({"host": "", "unreachable": False, "failed": False, "rc": 0, "stdout": envelope})
    for i in range(count):
        (folder / f"node-{i:04d}").mkdir(parents=True)
        (folder / f"node-{i:04d}" / "result.json").write_text(record)


def main() -> int:
    why = sshd_available()
    if why:
        print(f"bench_fleet: {why}")
        return 2
    base = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    nodes = {}
    try:
        key = client_key(base)
        config = ssh_config(base, key)
        nodes = fixture_nodes(base, NODES, key)
        env = _controller_env(base)
        inventory = _inventory(base / "hosts.ini", nodes, key, config, sorted(nodes))
        ansible = str(Path(sys.executable).parent / "ansible")
        proc.run([ansible, "-i", str(inventory), "all", "-m", "ping"], timeout=120, env=env)  # warm caches
        start = time.perf_counter()
        pinged = proc.run([ansible, "-i", str(inventory), "all", "-m", "ping"], timeout=120, env=env)
        ping_s = time.perf_counter() - start
        assert pinged.ok, pinged.stdout + pinged.stderr
        start = time.perf_counter()
        run = run_audit(str(inventory), base / "results", env)
        audit_s = time.perf_counter() - start
        gathered = results.read_results(run.results)
        assert [r.status for r in gathered] == ["ok"] * NODES, gathered
        print(f"ping {ping_s:.2f} s, audit {audit_s:.2f} s for {NODES} nodes: ratio {audit_s / ping_s:.2f}")
        envelope = json.loads((run.results / "n0" / "result.json").read_text())["stdout"]
        many = base / "many"
        fake_results(many, envelope, 1000)
        seconds = min(fold(many) for _ in range(3))
        print(f"fold of 1,000 fetched results: {seconds:.2f} s (floor {FOLD_S} s)")
        return 0 if seconds < FOLD_S else 1
    finally:
        for node in nodes.values():
            stop_node(node)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
