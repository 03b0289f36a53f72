"""What `ascenv lock --check` adds to the probe it runs: on an unchanged machine it should be
little (build the lock, hash it, read the lock file, compare two hashes).

On each fixture machine (tests/fixture_hosts.py): the fastest of N runs of the probe alone
(ascenv.probe.snapshot.collect) against the whole `ascenv lock --check` command (probe included), and
the lock steps alone (build the machine's lock, read the lock file, compare).

    .venv/bin/python bench/bench_lock_check.py [--runs 15]
"""

from __future__ import annotations

import argparse
import functools
import io
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from ascenv import cli, lockfile  # noqa: E402
from ascenv.commands._common import Context  # noqa: E402
from ascenv.output import Output  # noqa: E402
from ascenv.probe.fs import Root  # noqa: E402
from ascenv.probe.snapshot import collect  # noqa: E402
from tests.fixture_hosts import HOST_NAMES, build_host  # noqa: E402


def interleaved_min(a, b, runs: int) -> tuple[float, float]:
    """Fastest of ``runs`` timings of each, run alternately so that load from other processes
    hits both alike (the minimum is the least noisy estimate of the cost itself)."""
    ta, tb = [], []
    for _ in range(runs):
        for fn, times in ((a, ta), (b, tb)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return min(ta), min(tb)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in HOST_NAMES:
            host = build_host(name, Path(tmp))
            where = ["--root", str(host.root), "--python", sys.executable]

            def command(*argv: str, where: list = where, environ: Any = host.environ) -> int:
                out = Output("human", stdout=io.StringIO(), stderr=io.StringIO(), interactive=False)
                return cli.main([*argv, *where], ctx=Context(environ=environ, out=out, cwd=tmp))

            assert command("lock", "-o", f"{name}.lock") == 0
            assert command("lock", "--check", f"{name}.lock") == 0, f"{name}: not in sync with itself"
            snap = collect(Root(host.root), host.environ, python=sys.executable)
            text = (Path(tmp) / f"{name}.lock").read_text()

            def lock_steps(snap: Any = snap, text: str = text) -> None:  # what --check does besides probing
                machine = lockfile.lock_from_snapshot(snap, generator_version="bench")
                locked, _ = lockfile.loads_lock(text, "bench")
                lockfile.check(locked, machine)

            probe, check = interleaved_min(
                functools.partial(collect, Root(host.root), host.environ, python=sys.executable),
                functools.partial(command, "lock", "--check", f"{name}.lock"),
                args.runs,
            )
            steps = min(timeit.repeat(lock_steps, number=1, repeat=args.runs))
            worst = max(worst, steps / probe)
            print(
                f"{name:28} probe {probe * 1e3:6.1f} ms   lock --check {check * 1e3:6.1f} ms   "
                f"lock steps alone {steps * 1e3:5.2f} ms ({steps / probe:.1%} of the probe)"
            )
    print(f"worst: the lock steps of --check cost {worst:.1%} of the probe alone")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
