"""Time the whole `ascenv clean-cache` command against `du -s` on trees of several shapes.

    .venv/bin/python bench/bench_cache_scan.py [--files 200000] [--rounds 5] [--shape NAME ...] [--busy N]

For each shape (all by default) builds a cache-like tree of ``--files`` files in a temporary
directory, warms the page cache, then runs, one after the other in each round: `du -s -B1` of
the home, `ascenv clean-cache ls --format json` and `ascenv clean-cache --dry-run --format json`
as subprocesses (start-up, imports, machine facts and output included), and the in-process
scanner `ascenv.cache.scan.tree_stats` for reference. The three commands take turns going first
(round r starts with the r-th), so none is always the one after the warm-up or after the scanner.
Shapes (see SHAPES):

- mixed: 4 SoC directories holding 40 % of the files, 120 kernel_meta directories the rest
- flat: one SoC directory of sub-directories of 1,000 files each (issue 25's 3.1x tree)
- deep: 20 chains of 100 nested directories, files spread over every level
- many-small: directories of 5 files, 100 of them per parent
- huge-dir: every file in one SoC directory

Prints, per shape, the median of each and the median per-round ratio of each command to du
(budget: 1.5), whether the commands saw every file and the scanner's size equals du's, and at
the end the wall and CPU ratios of every shape and the worst of each. Exits 1 when a wall ratio
is over budget or a count differs.

Beside the wall times, the CPU seconds (user + system, the command's workers included) of du
and of each command: on a busy shared machine the wall ratio tells how much CPU each side got
as much as how much it needed; the CPU ratio hardly depends on the load. Only the wall ratio
decides the exit code.

``--busy N`` (or ``ASCENV_BENCH_BUSY=N``) runs N busy loops (``python -c "while True: pass"``)
during the rounds of each shape, not while its tree is built, to show the ratios on a machine
that has no idle CPU; they are started and ended by this script alone, and said so in the output.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascenv import proc  # noqa: E402
from ascenv.cache.scan import tree_stats  # noqa: E402
from ascenv.words import counted  # noqa: E402

BUDGET = 1.5


KERNEL = "te_op_{i}_0123456789abcdef.o"


def _soc(top: str, n: int = 1) -> str:
    return os.path.join(top, "home", "atc_data", "kernel_cache", f"Ascend910B{n}")


def _spread(files: int, parts: int) -> list[int]:
    """``files`` split over ``parts`` as evenly as whole numbers allow."""
    return [files // parts + (1 if i < files % parts else 0) for i in range(parts)]


def build_mixed(top: str, files: int) -> None:
    flat = files * 2 // 5  # 40 % in four big SoC directories, the rest in kernel_meta trees
    for soc in range(4):
        d = _soc(top, soc + 1)
        os.makedirs(d)
        _fill(d, flat // 4, KERNEL, soc)
    for j, count in enumerate(_spread(files - 4 * (flat // 4), 120)):
        d = os.path.join(top, "home", "work", f"job{j}", "kernel_meta")
        os.makedirs(d)
        _fill(d, count, "kernel_{i}.json", j)


def build_flat(top: str, files: int) -> None:
    for j, count in enumerate(_spread(files, max(files // 1000, 1))):
        d = os.path.join(_soc(top), f"op_{j:04d}")
        os.makedirs(d)
        _fill(d, count, KERNEL, j)


def build_deep(top: str, files: int) -> None:
    chains, depth = 20, 100
    counts = iter(_spread(files, chains * depth))
    for c in range(chains):
        d = os.path.join(_soc(top), f"chain{c}")
        for level in range(depth):
            d = os.path.join(d, f"l{level}")
            os.makedirs(d)
            _fill(d, next(counts), KERNEL, level)


def build_many_small(top: str, files: int) -> None:
    for j, count in enumerate(_spread(files, max(files // 5, 1))):
        d = os.path.join(_soc(top), f"g{j // 100}", f"op_{j}")
        os.makedirs(d)
        _fill(d, count, KERNEL, j)


def build_huge_dir(top: str, files: int) -> None:
    os.makedirs(_soc(top))
    _fill(_soc(top), files, KERNEL, 0)


SHAPES = {
    "mixed": build_mixed,
    "flat": build_flat,
    "deep": build_deep,
    "many-small": build_many_small,
    "huge-dir": build_huge_dir,
}


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
    cpu = _children_cpu()
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ascenv", "clean-cache", *argv],
        env=env,
        cwd=top,
        capture_output=True,
        timeout=600,
    )
    seconds = time.monotonic() - started
    CPU_SECONDS.append(_children_cpu() - cpu)
    if done.returncode:
        raise SystemExit(f"ascenv clean-cache {' '.join(argv)} exited {done.returncode}: {done.stderr.decode()}")
    return seconds, json.loads(done.stdout)


CPU_SECONDS: list[float] = []  # of the last subprocess waited for, appended by command() and _du()


def _children_cpu() -> float:
    """User + system seconds of the children waited for so far (and of theirs: a command's
    forked workers are in its own count once it has reaped them)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _du(home: str) -> proc.Completed:
    cpu = _children_cpu()
    done = proc.run(["du", "-s", "-B1", home], timeout=600)
    CPU_SECONDS.append(_children_cpu() - cpu)
    return done


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="repeatable; default: every shape")
    parser.add_argument(
        "--busy",
        type=int,
        default=int(os.environ.get("ASCENV_BENCH_BUSY") or 0),
        metavar="N",
        help="run N busy loops during the rounds (default: $ASCENV_BENCH_BUSY, else 0)",
    )
    args = parser.parse_args()
    if args.busy:
        print(f"{counted(args.busy, 'busy loop')} beside every round (--busy {args.busy})")
    worst: dict[str, tuple[float, float]] = {}
    ok = True
    for shape in args.shape or list(SHAPES):
        wall, cpu, shape_ok = bench_shape(shape, args.files, args.rounds, args.busy)
        worst[shape] = (wall, cpu)
        ok = ok and shape_ok
    beside = f", beside {counted(args.busy, 'busy loop')}" if args.busy else ""
    print(f"\nwhole command / du -s, worse of ls and --dry-run, median of {args.rounds} rounds{beside}:")
    for shape, (wall, cpu) in worst.items():
        print(f"{shape:<12} wall {wall:.2f}x  CPU {cpu:.2f}x{'  OVER BUDGET' if wall > BUDGET else ''}")
    name = max(worst, key=lambda k: worst[k][0])
    by_cpu = max(worst, key=lambda k: worst[k][1])
    print(f"worst shape: {name}, wall {worst[name][0]:.2f}x du -s (budget {BUDGET})")
    print(f"worst CPU: {by_cpu}, {worst[by_cpu][1]:.2f}x du -s's CPU")
    return 0 if ok and worst[name][0] <= BUDGET else 1


@contextlib.contextmanager
def busy_loops(count: int) -> Iterator[list[int]]:
    """``count`` processes spinning on a CPU each, ended (by their own pids) on the way out."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield [p.pid for p in loops]
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def bench_shape(shape: str, files: int, rounds: int, busy: int = 0) -> tuple[float, float, bool]:
    """(the worse command's median wall ratio to du -s, its CPU ratio, whether every file was
    seen and sized as du)."""
    with tempfile.TemporaryDirectory(prefix="ascenv-bench-cache-") as top:
        started = time.monotonic()
        SHAPES[shape](top, files)
        os.makedirs(os.path.join(top, "home", "work"), exist_ok=True)
        home = os.path.join(top, "home")
        print(
            f"\n{shape}: built {files:,} files in {time.monotonic() - started:.1f} s under {top}; "
            f"CPUs: {len(os.sched_getaffinity(0))}; load average {_load()}"
        )
        proc.run(["du", "-s", home], timeout=600)  # warm the dentry and inode caches
        times: dict[str, list[float]] = {"du -s": [], "clean-cache ls": [], "clean-cache --dry-run": [], "scanner": []}
        cpu: dict[str, list[float]] = {"du -s": [], "clean-cache ls": [], "clean-cache --dry-run": []}
        du_bytes = scan_bytes = 0
        seen: dict[str, int] = {}
        runs = ("du -s", "clean-cache ls", "clean-cache --dry-run")
        with busy_loops(busy) as pids:
            if pids:
                print(f"{counted(len(pids), 'busy loop')} running: pid {' '.join(map(str, pids))}")
            for r in range(rounds):
                for name in runs[r % 3 :] + runs[: r % 3]:  # each goes first in turn
                    if name == "du -s":
                        done = _du(home)
                        times[name].append(done.duration)
                        du_bytes = int(done.stdout.split()[0])
                    else:
                        seconds, data = command(top, *(("ls",) if name.endswith("ls") else ("--dry-run",)))
                        times[name].append(seconds)
                        seen[name] = sum(e["files"] for e in data["entries"])
                    cpu[name].append(CPU_SECONDS[-1])
                started = time.monotonic()
                (stats,) = tree_stats([home])
                times["scanner"].append(time.monotonic() - started)
                scan_bytes = stats.allocated
            load = _load()
        # each round's runs went back to back under the same load: compare within rounds
        ratios = {
            name: statistics.median(t / d for t, d in zip(runs, times["du -s"]))
            for name, runs in times.items()
            if name != "du -s"
        }
        cpu_ratios = {name: statistics.median(c / d for c, d in zip(used, cpu["du -s"])) for name, used in cpu.items()}
        for name, runs in times.items():
            ratio = f"  {ratios[name]:.2f}x du" if name in ratios else ""
            print(f"{name:<22} median {statistics.median(runs):.3f} s{ratio}  ({' '.join(f'{t:.3f}' for t in runs)})")
        for name, used in cpu.items():
            ratio = "" if name == "du -s" else f"  {cpu_ratios[name]:.2f}x du"
            print(f"{name:<22} CPU {statistics.median(used):.3f} s{ratio}  ({' '.join(f'{c:.3f}' for c in used)})")
        counts_ok = all(n == files for n in seen.values())
        print(f"files seen by the commands: {seen} -> {'all' if counts_ok else 'MISSING SOME'} of {files:,}")
        print(
            f"sizes: du {du_bytes:,} B, scanner {scan_bytes:,} B -> "
            f"{'equal' if du_bytes == scan_bytes else 'DIFFERENT'}"
        )
        beside = f", {counted(busy, 'busy loop')} included" if busy else ""
        print(f"load average at the end of the rounds: {load}{beside} (other work on a shared machine slows every run)")
        worst = max(ratios["clean-cache ls"], ratios["clean-cache --dry-run"])
        worst_cpu = max(cpu_ratios["clean-cache ls"], cpu_ratios["clean-cache --dry-run"])
        print(
            f"ratio whole command / du -s (median of the rounds, worse command): wall {worst:.2f} "
            f"(budget {BUDGET}), CPU {worst_cpu:.2f}"
        )
        return worst, worst_cpu, counts_ok and du_bytes == scan_bytes


if __name__ == "__main__":
    raise SystemExit(main())
