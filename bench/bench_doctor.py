"""`ascenv doctor` against PyTorch's own environment collector, on the same machine, same run.

Issue #3 asks doctor to take at most a tenth of the wall time of `python -m torch.utils.collect_env`
(which imports torch and asks a dozen tools for their versions). doctor reads the same
interpreter's packages without importing torch.

    python3 -m venv /tmp/torch-venv && /tmp/torch-venv/bin/pip install torch==2.13.0
    .venv/bin/python bench/bench_doctor.py /tmp/torch-venv/bin/python [--rounds 7]

Both run on an otherwise idle machine: the ratio is of medians over interleaved runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fixture_hosts import build_host  # noqa: E402


def timed(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed


def spread(times: list[float]) -> str:
    if len(times) < 2:
        return f"{times[0]:.3f} s (1 run)"
    first, _, third = statistics.quantiles(times, n=4)
    return f"median {statistics.median(times):.3f} s (quartiles {first:.3f}-{third:.3f}, {len(times)} runs)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("torch_python", help="an interpreter with torch installed")
    parser.add_argument(
        "--rounds",
        type=int,
        default=7,
        help="rounds of one collect_env run and --doctor-runs doctor runs (default: %(default)s)",
    )
    parser.add_argument("--doctor-runs", type=int, default=3, help="doctor runs per round (default: %(default)s)")
    args = parser.parse_args()
    ascenv = str(Path(sys.executable).with_name("ascenv"))
    with tempfile.TemporaryDirectory() as tmp:
        host = build_host("a2-cann800", Path(tmp))
        env = dict(host.environ, HOME=tmp, PATH=host.environ["PATH"])
        peer_argv = [args.torch_python, "-m", "torch.utils.collect_env"]
        peer_env = dict(os.environ, HOME=tmp)
        # doctor through its console script, as a user runs it
        ours_argv = [ascenv, "doctor", "--root", str(host.root), "--python", args.torch_python, "--format", "json"]
        # Not timed: the first runs fill the page cache, and doctor's first run writes its
        # compat-matrix cache under HOME, as on any machine after the first use.
        timed(peer_argv, peer_env)
        timed(ours_argv, env)
        peer: list[float] = []
        ours: list[float] = []
        # Interleaved, so that a load change on the machine weighs on both sides alike.
        for _ in range(args.rounds):
            peer.append(timed(peer_argv, peer_env))
            ours.extend(timed(ours_argv, env) for _ in range(args.doctor_runs))
    print(f"python -m torch.utils.collect_env: {spread(peer)}")
    print(f"ascenv doctor (fixture a2-cann800, same interpreter): {spread(ours)}")
    print(
        f"ratio doctor / collect_env (medians): {statistics.median(ours) / statistics.median(peer):.3f}"
        "  (target <= 0.100)"
    )


if __name__ == "__main__":
    main()
