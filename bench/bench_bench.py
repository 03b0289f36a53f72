"""`ascenv bench` against its floors:

1. importing a 200,000-row kernel_details.csv (rows of a real torch_npu Level2 sample repeated)
   vs a plain ``csv.reader`` pass over the same file: ratio <= 2;
2. ``compare`` (baseline vs latest) and ``history`` over 1,000 stored runs: < 1 s each;
3. ``compare`` of one shape with 1,000,000 launches a side (in process): < 10 s (the element-wise
   bootstrap took more than 500 s).

Each is timed in process (the reader / the core, best of 3) and as the whole ``ascenv bench ...``
process the user runs (against a whole ``python`` process doing the plain pass, for the ratio);
the goals are checked on the whole process. ``import`` runs with ``--no-probe`` so that it times
the import, not this machine's probe.

    .venv/bin/python bench/bench_bench.py [--rows 200000] [--runs 1000] [--launches 1000000]
"""

from __future__ import annotations

import argparse
import csv
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from ascenv.bench.fingerprint import Fingerprint  # noqa: E402
from ascenv.bench.history import history  # noqa: E402
from ascenv.bench.readers import read_path  # noqa: E402
from ascenv.bench.records import Record  # noqa: E402
from ascenv.bench.stats import compare, compare_runs  # noqa: E402
from ascenv.bench.store import BenchStore, new_run  # noqa: E402
from ascenv.store import Store  # noqa: E402

SAMPLE = (
    ROOT
    / "tests"
    / "data"
    / "msprof"
    / "torch_npu-2.7.1_cann8.3.RC1_A2_kernel_details_L2-PipeUtil_EXCERPT_msinsight.txt"
)
IMPORT_RATIO, STORE_S, LAUNCHES_S = 2.0, 1.0, 10.0


def best(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def process(argv: list[str], repeat: int = 3) -> float:
    """Best wall time of a whole process (its output discarded); fails loudly if it fails."""

    def once() -> None:
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr}")

    return best(once, repeat)


def ascenv(*args: str) -> list[str]:
    return [sys.executable, "-m", "ascenv", *args]


PLAIN = "import csv, sys\nwith open(sys.argv[1], newline='') as fh:\n    for _ in csv.reader(fh): pass\n"


def plain(path: Path) -> None:
    with open(path, newline="") as fh:
        for _ in csv.reader(fh):
            pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--launches", type=int, default=1_000_000)
    args = parser.parse_args()
    header, *rows = SAMPLE.read_text().split("\n", 2)[2].splitlines()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel_details.csv"
        with open(path, "w", newline="") as fh:
            fh.write(header + "\n")
            for i in range(args.rows):
                fh.write(rows[i % len(rows)] + "\n")
        reader = best(lambda: plain(path))
        ours = best(lambda: read_path(path))
        print(f"import {args.rows} rows in process: {ours:.3f} s, csv.reader {reader:.3f} s, ratio {ours / reader:.2f}")
        store_dir = Path(tmp) / "store"
        reader = process([sys.executable, "-c", PLAIN, str(path)])
        imports = str(Path(tmp) / "imports")
        ours = process(ascenv("bench", "import", str(path), "--op", "kd", "--no-probe", "--store", imports))
        ratio = ours / reader
        ok &= ratio <= IMPORT_RATIO
        print(
            f"import {args.rows} rows, whole process: {ours:.3f} s, python + csv.reader {reader:.3f} s, "
            f"ratio {ratio:.2f} (goal <= {IMPORT_RATIO})"
        )

        bench = BenchStore(Store(store_dir))
        for i in range(args.runs):
            durations = tuple(100.0 + (i * 7 + j) % 5 for j in range(10))
            rec = Record("add_custom", "n=1024001", None, None, "AI_VECTOR_CORE", 10, durations, 102.0, 100.0, 104.0)
            bench.write(
                new_run(
                    op="add_custom",
                    target="npu",
                    tool="msprof op",
                    created=f"2026-12-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000000Z",
                    source=str(i),
                    files=(),
                    skipped_rows=0,
                    fingerprint=Fingerprint(soc="910B4"),
                    records=(rec,),
                )  # fmt: skip
            )
        bench.set_baseline(bench.runs("add_custom")[-1])  # the oldest: compare reads both ends

        def do_compare() -> None:
            a = bench.resolve("baseline", "add_custom")
            b = bench.resolve("latest", "add_custom")
            compare_runs(a.run, b.run, 0.05)

        def do_history(limit: int) -> None:
            newest, total = bench.newest("add_custom", limit + 1) if limit else (bench.runs("add_custom"), args.runs)
            history("add_custom", [s.run for s in newest], None, limit, total)

        where = ("--store", str(store_dir), "--format", "json")
        for name, fn, argv in (
            ("compare", do_compare, ascenv("bench", "compare", "--op", "add_custom", *where)),
            ("compare (no --op)", None, ascenv("bench", "compare", *where)),
            ("history", lambda: do_history(20), ascenv("bench", "history", "add_custom", *where)),
            (
                "history --limit 0",
                lambda: do_history(0),
                ascenv("bench", "history", "add_custom", "--limit", "0", *where),
            ),
        ):
            inside = f"in process {best(fn, 1):.3f} s, " if fn else ""
            seconds = process(argv, 1 if name.endswith("--limit 0") else 3)
            goal = not name.endswith("--limit 0")  # every run judged: reported, no goal
            ok &= seconds < STORE_S or not goal
            print(
                f"{name} over {args.runs} stored runs: {inside}whole process {seconds:.3f} s"
                + (f" (goal < {STORE_S} s)" if goal else " (all runs judged; no goal)")
            )
    rng = random.Random(1)
    a = [100 * (1 + rng.gauss(0, 0.05)) for _ in range(args.launches)]
    b = [x * 1.02 for x in a]
    seconds = best(lambda: compare(a, b, 0.05), 1)
    ok &= seconds < LAUNCHES_S
    print(f"compare of {args.launches} launches a side, in process: {seconds:.2f} s (goal < {LAUNCHES_S} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
