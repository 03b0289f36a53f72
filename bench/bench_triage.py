"""`ascenv triage` over a 100 MB log against `rg -F -f` of the same literals over the same file.

The log is plain vLLM/plog-style INFO noise with the lines of a real failure (corpus: the -8020 /
drvRetCode=87 / 507899 container log of vllm-ascend#632) spread through it, the way a long
serving log carries the error somewhere in the middle. ripgrep (Debian: `apt-get install ripgrep`)
gets the signature table's literals as its fixed-string pattern file, so both look for the same
strings; triage then also cleans, groups and ranks the matched lines. Prints both times, their
ratio, and which matcher the scan used (re2, or the bytes.find fallback). The two run in turn,
``--rounds`` times, and the medians are compared: on a shared machine one run of either can take
twice as long as the next.

    .venv/bin/python bench/bench_triage.py [--mb 100] [--rounds 5] [--dense | --every | --all]

--every: every line an error, each with its own time, pid and device (no two lines the same text);
--all: the three shapes in turn, then the worst ratio. Wall time and CPU time (rg's from the
children's rusage) are both printed: on a shared machine the CPU ratio is the steadier one.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from ascenv.checks import load_checks  # noqa: E402
from ascenv.triage import load, triage  # noqa: E402
from ascenv.triage.matcher import LiteralMatcher  # noqa: E402

ERROR_LOG = (
    ROOT
    / "tests/data/corpus/errors/container_-8020_then_collect_env_drvRet87_507899_unknowsoctype_vllm-ascend-issue632.txt"
)
NOISE = (
    "INFO 04-23 09:25:10 [model_runner_v1.py:2114] Loading model weights took 14.2488 GB\n"
    "[INFO] RUNTIME(846,python):2025-04-23-09:25:06.556.128 [task_fail_callback_manager.cc:52] 846 "
    "TaskFailCallBackManager: Constructor.\n"
    "INFO 04-23 09:25:12 [metrics.py:455] Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 31.2 tokens/s\n"
)


# --dense: a service failing over and over, its error line every 34 lines (the 507033 line of the
# HAMi#1894 log of the labelled corpus, with vLLM's worker prefix)
DENSE_LINE = (
    "(Worker pid=6871) ERROR [multiproc_executor.py:800] RuntimeError: ExchangeDevice:build/CMakeFiles/"
    "torch_npu.dir/compiler_depend.ts:253 NPU function error: c10_npu::SetDevice(device), error code is 507033\n"
)


def every_line(index: int) -> str:
    return (
        f"ERROR 04-18 08:{index // 60 % 60:02d}:{index % 60:02d} [worker.py:{index % 997}] (pid={index % 5000}) "
        f"open device {index % 8} failed, runtime result = 507033.\n"
    )


def make_log(path: Path, megabytes: int, dense: bool = False, every: bool = False) -> None:
    if every:
        with open(path, "wb") as out:
            written, index = 0, 0
            while written < megabytes * 1_000_000:
                chunk = "".join(every_line(i) for i in range(index, index + 10_000)).encode()
                out.write(chunk)
                written, index = written + len(chunk), index + 10_000
        return
    error = ERROR_LOG.read_text(encoding="utf-8")
    chunk = ((NOISE * 11 + DENSE_LINE) * 180 if dense else NOISE * 2000).encode()
    with open(path, "wb") as out:
        written = 0
        target = megabytes * 1_000_000
        inserted = 0
        while written < target:
            out.write(chunk)
            written += len(chunk)
            if written > target * (inserted + 1) / 4 and inserted < 3:
                out.write(error.encode())
                inserted += 1


SHAPES = {"sparse": "3 errors", "dense": "an error every 34 lines", "every": "every line an error"}


def measure(shape: str, megabytes: int, rounds: int, table, rg: str) -> tuple[float, float]:
    """Prints the figures of one shape; returns its (wall, CPU) ratios triage / rg."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "serve.log"
        make_log(log, megabytes, shape == "dense", shape == "every")
        patterns = Path(tmp) / "literals.txt"
        patterns.write_text("".join(literal + "\n" for literal in table.literals), encoding="utf-8")
        size = log.stat().st_size
        command = [rg, "-F", "-f", str(patterns), "-c", "--no-config", str(log)]
        subprocess.run(command, capture_output=True, check=False)  # warm the page cache
        rg_times, triage_times, rg_cpu, triage_cpu = [], [], [], []
        for _ in range(max(1, rounds)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            count = subprocess.run(command, capture_output=True, text=True).stdout.strip()
            rg_times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            rg_cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            start, cpu = time.perf_counter(), time.process_time()
            with open(log, "rb") as stream:
                result = triage(stream, None, None, table)
            triage_times.append(time.perf_counter() - start)
            triage_cpu.append(time.process_time() - cpu)
    assert result.causes and result.causes[0].cause == "device_busy", result.causes
    rg_s, triage_s = statistics.median(rg_times), statistics.median(triage_times)
    rg_c, triage_c = statistics.median(rg_cpu), statistics.median(triage_cpu)
    engine = LiteralMatcher(tuple(lit.encode() for lit in table.literals)).engine
    counts = f"{len(table.signatures)} signatures / {len(table.literals)} literals"
    print(f"log: {size / 1e6:.0f} MB ({SHAPES[shape]}), {result.lines} lines, {counts}")
    rounds_ = f"median of {len(rg_times)}"
    print(
        f"  rg -F -f <the {len(table.literals)} literals> -c: {rg_s:.3f} s, CPU {rg_c:.3f} s, {rounds_} ({count} lines)"
    )
    print(f"  ascenv triage (scan + rank, no machine; matcher {engine}): {triage_s:.3f} s, CPU {triage_c:.3f} s")
    print(f"  ratio triage / rg: {triage_s / rg_s:.2f}x wall, {triage_c / rg_c:.2f}x CPU (goal: at most 2x)")
    return triage_s / rg_s, triage_c / rg_c


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--dense", action="store_true", help="an error line every 34 lines, not 3 in the log")
    shape.add_argument("--every", action="store_true", help="every line an error, each its own text")
    shape.add_argument("--all", action="store_true", help="the three shapes in turn, and the worst")
    args = parser.parse_args()
    rg = shutil.which("rg")
    if rg is None:
        print("rg (ripgrep) not found: apt-get install ripgrep", file=sys.stderr)
        return 2
    table = load(known_checks=set(load_checks()))
    shapes = list(SHAPES) if args.all else ["dense" if args.dense else ("every" if args.every else "sparse")]
    ratios = {shape: measure(shape, args.mb, args.rounds, table, rg) for shape in shapes}
    if len(ratios) > 1:
        wall = max(ratios, key=lambda s: ratios[s][0])
        cpu = max(ratios, key=lambda s: ratios[s][1])
        print(f"worst: {ratios[wall][0]:.2f}x wall ({wall}), {ratios[cpu][1]:.2f}x CPU ({cpu}) (goal: at most 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
