"""Time ascenv's cache scanner against `du -s` on the same 200,000-file tree, alternately.

    .venv/bin/python bench/bench_cache_scan.py [--files 200000] [--rounds 5]

Builds a cache-like tree in a temporary directory (4 SoC directories of 20,000 kernels each,
120 kernel_meta directories of 1,000 files), warms the page cache, then times `du -s -B1` and
`ascenv.cache.scan.tree_stats` one after the other, several rounds, and prints the median of
each, the median per-round ratio (budget: 1.5) and whether the sizes agree (allocated bytes, as du counts them).
Exits 1 when the ratio is over budget or the sizes differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascenv import proc  # noqa: E402
from ascenv.cache.scan import tree_stats  # noqa: E402

BUDGET = 1.5


def build(top: str, files: int) -> None:
    flat = files * 2 // 5  # 40 % in four big SoC directories, the rest in kernel_meta trees
    for soc in range(4):
        d = os.path.join(top, "atc_data", "kernel_cache", f"Ascend910B{soc + 1}")
        os.makedirs(d)
        _fill(d, flat // 4, "te_op_{i}_0123456789abcdef.o", soc)
    rest = files - 4 * (flat // 4)
    jobs = 120
    for j in range(jobs):
        d = os.path.join(top, "work", f"job{j}", "kernel_meta")
        os.makedirs(d)
        _fill(d, rest // jobs + (1 if j < rest % jobs else 0), "kernel_{i}.json", j)


def _fill(directory: str, count: int, pattern: str, salt: int) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(count):
            f = os.open(pattern.format(i=i), os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
            os.write(f, b"x" * ((i * 37 + salt) % 6000))
            os.close(f)
    finally:
        os.close(fd)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=None, help="scanner worker processes (default: CPUs)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ascenv-bench-cache-") as top:
        started = time.monotonic()
        build(top, args.files)
        print(
            f"built {args.files:,} files in {time.monotonic() - started:.1f} s under {top}; CPUs: {len(os.sched_getaffinity(0))}"
        )
        proc.run(["du", "-s", top], timeout=600)  # warm the dentry and inode caches
        du_times, scan_times = [], []
        du_bytes = scan_bytes = files = 0
        for _ in range(args.rounds):
            done = proc.run(["du", "-s", "-B1", top], timeout=600)
            du_times.append(done.duration)
            du_bytes = int(done.stdout.split()[0])
            started = time.monotonic()
            (stats,) = tree_stats([top], workers=args.workers)
            scan_times.append(time.monotonic() - started)
            scan_bytes, files = stats.allocated, stats.files
        du_median, scan_median = statistics.median(du_times), statistics.median(scan_times)
        # each round's du and scan ran back to back under the same load: compare within rounds
        ratio = statistics.median(s / d for s, d in zip(scan_times, du_times))
        print(f"du -s     median {du_median:.3f} s  ({' '.join(f'{t:.3f}' for t in du_times)})")
        print(f"scanner   median {scan_median:.3f} s  ({' '.join(f'{t:.3f}' for t in scan_times)})  {files:,} files")
        print(
            f"sizes: du {du_bytes:,} B, scanner {scan_bytes:,} B -> {'equal' if du_bytes == scan_bytes else 'DIFFERENT'}"
        )
        print(f"ratio scanner/du (median of the rounds): {ratio:.2f} (budget {BUDGET})")
        return 0 if ratio <= BUDGET and du_bytes == scan_bytes else 1


if __name__ == "__main__":
    raise SystemExit(main())
