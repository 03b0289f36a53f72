"""`ascenv diff` over a fleet of 1,000 node snapshots: must finish in under 2 seconds.

The snapshots are made from one fixture machine (tests/fixture_hosts.py, probed with
ascenv.probe.snapshot.collect; the model sample of tests/lock_samples.py while collect is not wired yet)
with small variations: per-node host name, time and chip telemetry (not part of the stack), and a
few real outliers (a torch_npu patch release on 2 %, another driver on 0.5 %, a lost card on 0.3 %).

    .venv/bin/python bench/bench_diff.py [--nodes 1000]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from ascenv import cli  # noqa: E402
from ascenv.model import Snapshot  # noqa: E402
from ascenv.output import Output  # noqa: E402
from ascenv.snapshot_io import snapshot_to_json  # noqa: E402

BUDGET_S = 2.0


def base_snapshot(tmp: Path) -> tuple[Snapshot, str]:
    """The A2 fixture machine probed, or the model sample when collect is not wired yet."""
    from ascenv.probe.fs import Root
    from ascenv.probe.snapshot import collect
    from tests.fixture_hosts import build_host

    host = build_host("a2-cann800", tmp)
    snap = collect(Root(host.root), host.environ, python=sys.executable)
    if snap.cann.installs and snap.npu.chips:
        return snap, "fixture a2-cann800 via ascenv.probe.snapshot.collect"
    from lock_samples import a2

    return a2(), "tests/lock_samples.a2() (collect does not fill CANN/npu-smi yet)"


def variant(base: Snapshot, i: int) -> Snapshot:
    from lock_samples import with_package

    chips = tuple(replace(c, temp_c=40 + (i + c.npu) % 7, power_w=80.0 + i % 13) for c in base.npu.chips)
    snap = replace(
        base,
        created=f"2025-12-01T08:{i // 60 % 60:02}:{i % 60:02}+00:00",
        host=replace(base.host, hostname=f"node{i:04}"),
        npu=replace(base.npu, chips=chips),
    )
    if i % 50 == 7:
        torch_npu = next(
            (d.version for d in snap.python.distributions if d.name.lower().replace("-", "_") == "torch_npu"), None
        )
        snap = with_package(snap, "torch_npu", (torch_npu or "2.8.0") + ".post1")
    if i % 200 == 11:
        snap = replace(snap, driver=replace(snap.driver, version="25.2.0"))
    if i % 333 == 5:
        snap = replace(snap, npu=replace(snap.npu, chips=snap.npu.chips[:-1]))
    return snap


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, origin = base_snapshot(Path(tmp) / "host")
        if not any(d.name.lower().replace("-", "_") == "torch_npu" for d in base.python.distributions):
            from lock_samples import a2

            # the fixture's target Python (this venv) has no torch stack: add the sample's
            dists = a2().python.distributions + base.python.distributions
            base = replace(base, python=replace(base.python, distributions=dists))
        files = []
        for i in range(args.nodes):
            path = Path(tmp) / f"node{i:04}.json"
            path.write_text(json.dumps(snapshot_to_json(variant(base, i))))
            files.append(str(path))
        size = sum(Path(f).stat().st_size for f in files)
        out = Output("json", stdout=io.StringIO(), stderr=io.StringIO(), interactive=False)
        start = time.perf_counter()
        code = cli.main(["diff", *files, "--format", "json"], ctx=cli.Context(environ={}, out=out, cwd=tmp))
        elapsed = time.perf_counter() - start
        report = json.loads(out.stdout.getvalue())
    print(f"base: {origin}; {len(base.python.distributions)} distributions, {len(base.npu.chips)} chips")
    print(
        f"ascenv diff over {args.nodes} snapshots ({size / 1e6:.1f} MB): {elapsed:.2f} s, exit {code}, "
        f"{report['stacks']} distinct stacks, outlier groups {[len(g['nodes']) for g in report['groups'][:-1]]}"
    )
    print(f"budget {BUDGET_S:.1f} s: {elapsed / BUDGET_S:.2f} of it ({'OK' if elapsed < BUDGET_S else 'OVER'})")
    return 0 if elapsed < BUDGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
