"""`ascenv bench` against its floors:

1. importing a 200,000-row kernel_details.csv (rows of a real torch_npu Level2 sample repeated)
   vs a plain ``csv.reader`` pass over the same file: ratio <= 2;
2. ``compare`` and ``history`` over 1,000 stored runs: < 1 s each.

    .venv/bin/python bench/bench_bench.py [--rows 200000] [--runs 1000]
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from ascenv.bench.fingerprint import Fingerprint  # noqa: E402
from ascenv.bench.readers import read_path  # noqa: E402
from ascenv.bench.records import Record  # noqa: E402
from ascenv.bench.store import BenchStore, new_run  # noqa: E402
from ascenv.output import Output  # noqa: E402
from ascenv.output.bench import history  # noqa: E402
from ascenv.store import Store  # noqa: E402

SAMPLE = (
    ROOT
    / "tests"
    / "data"
    / "msprof"
    / "torch_npu-2.7.1_cann8.3.RC1_A2_kernel_details_L2-PipeUtil_EXCERPT_msinsight.txt"
)
IMPORT_RATIO, STORE_S = 2.0, 1.0


def best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def plain(path: Path) -> None:
    with open(path, newline="") as fh:
        for _ in csv.reader(fh):
            pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=1000)
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
        ratio = ours / reader
        ok &= ratio <= IMPORT_RATIO
        print(
            f"import {args.rows} rows: {ours:.3f} s, csv.reader {reader:.3f} s, "
            f"ratio {ratio:.2f} (goal <= {IMPORT_RATIO})"
        )

        store = Store(Path(tmp) / "store")
        bench = BenchStore(store)
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
        from ascenv.bench.stats import compare_runs

        def do_compare() -> None:
            a = bench.resolve("latest", "add_custom")
            b = bench.runs("add_custom")[-1]
            compare_runs(a.run, b.run, 0.05)

        def do_history() -> None:
            history(
                Output("json", stdout=io.StringIO(), stderr=io.StringIO()),
                "add_custom",
                [s.run for s in bench.runs("add_custom")],
                None,
                "json",
            )

        for name, fn in (("compare", do_compare), ("history", do_history)):
            seconds = best(fn, 1)
            ok &= seconds < STORE_S
            print(f"{name} over {args.runs} stored runs: {seconds:.3f} s (goal < {STORE_S} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
