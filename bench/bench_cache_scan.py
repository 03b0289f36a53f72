"""Time the whole `ascenv clean-cache` command against `du -s` on the same 200,000-file tree.

    .venv/bin/python bench/bench_cache_scan.py [--files 200000] [--rounds 5]

Builds a cache-like tree in a temporary directory (a home with 4 SoC directories of 20,000
kernels each, and 120 kernel_meta directories of 1,000 files below a project), warms the page
cache, then runs, one after the other in each round: `du -s -B1` of the home, `ascenv
clean-cache ls --format json` and `ascenv clean-cache --dry-run --format json` as
subprocesses (start-up, imports, machine facts and output included), and the in-process
scanner `ascenv.cache.scan.tree_stats` for reference. Prints the median of each, the median
per-round ratio of each command to du (budget: 1.5), and whether the command saw every file and
the scanner's size equals du's. Exits 1 when a command is over budget or a count differs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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
        d = os.path.join(top, "home", "atc_data", "kernel_cache", f"Ascend910B{soc + 1}")
        os.makedirs(d)
        _fill(d, flat // 4, "te_op_{i}_0123456789abcdef.o", soc)
    rest = files - 4 * (flat // 4)
    jobs = 120
    for j in range(jobs):
        d = os.path.join(top, "home", "work", f"job{j}", "kernel_meta")
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


def command(top: str, *argv: str) -> tuple[float, dict]:
    """Run ``ascenv clean-cache ARGV --format json`` as a user would, in a clean environment
    whose home is the bench tree; its wall time and its JSON."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.path.join(top, "home"),
        "XDG_STATE_HOME": os.path.join(top, "state"),
        "XDG_CACHE_HOME": os.path.join(top, "cache"),
        "DOCKER_HOST": f"unix://{top}/no-engine.sock",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    argv = (*argv, "--format", "json", "--path", os.path.join(top, "home", "work"))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ascenv", "clean-cache", *argv],
        env=env,
        cwd=top,
        capture_output=True,
        timeout=600,
    )
    seconds = time.monotonic() - started
    if done.returncode:
        raise SystemExit(f"ascenv clean-cache {' '.join(argv)} exited {done.returncode}: {done.stderr.decode()}")
    return seconds, json.loads(done.stdout)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ascenv-bench-cache-") as top:
        started = time.monotonic()
        build(top, args.files)
        home = os.path.join(top, "home")
        print(
            f"built {args.files:,} files in {time.monotonic() - started:.1f} s under {top}; "
            f"CPUs: {len(os.sched_getaffinity(0))}; load average {_load()}"
        )
        proc.run(["du", "-s", home], timeout=600)  # warm the dentry and inode caches
        times: dict[str, list[float]] = {"du -s": [], "clean-cache ls": [], "clean-cache --dry-run": [], "scanner": []}
        du_bytes = scan_bytes = 0
        seen: dict[str, int] = {}
        for _ in range(args.rounds):
            done = proc.run(["du", "-s", "-B1", home], timeout=600)
            times["du -s"].append(done.duration)
            du_bytes = int(done.stdout.split()[0])
            for name, argv in (("clean-cache ls", ("ls",)), ("clean-cache --dry-run", ("--dry-run",))):
                seconds, data = command(top, *argv)
                times[name].append(seconds)
                seen[name] = sum(e["files"] for e in data["entries"])
            started = time.monotonic()
            (stats,) = tree_stats([home])
            times["scanner"].append(time.monotonic() - started)
            scan_bytes = stats.allocated
        # each round's runs went back to back under the same load: compare within rounds
        ratios = {
            name: statistics.median(t / d for t, d in zip(runs, times["du -s"]))
            for name, runs in times.items()
            if name != "du -s"
        }
        for name, runs in times.items():
            ratio = f"  {ratios[name]:.2f}x du" if name in ratios else ""
            print(f"{name:<22} median {statistics.median(runs):.3f} s{ratio}  ({' '.join(f'{t:.3f}' for t in runs)})")
        counts_ok = all(n == args.files for n in seen.values())
        print(f"files seen by the commands: {seen} -> {'all' if counts_ok else 'MISSING SOME'} of {args.files:,}")
        print(
            f"sizes: du {du_bytes:,} B, scanner {scan_bytes:,} B -> "
            f"{'equal' if du_bytes == scan_bytes else 'DIFFERENT'}"
        )
        print(f"load average after the rounds: {_load()} (other work on a shared machine slows every run)")
        worst = max(ratios["clean-cache ls"], ratios["clean-cache --dry-run"])
        print(f"ratio whole command / du -s (median of the rounds, worst command): {worst:.2f} (budget {BUDGET})")
        return 0 if worst <= BUDGET and counts_ok and du_bytes == scan_bytes else 1


if __name__ == "__main__":
    raise SystemExit(main())
