"""`ascenv doctor` against PyTorch's own environment collector, on the same machine, same run.

Issue #3 asks doctor to take at most a tenth of the wall time of `python -m torch.utils.collect_env`
(which imports torch and asks a dozen tools for their versions). doctor reads the same
interpreter's packages without importing torch.

    python3 -m venv /tmp/torch-venv && /tmp/torch-venv/bin/pip install torch==2.13.0
    .venv/bin/python bench/bench_doctor.py /tmp/torch-venv/bin/python
"""

from __future__ import annotations

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


def median_time(argv: list[str], env: dict, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True)
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return statistics.median(times)


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    torch_python = sys.argv[1]
    ascenv = str(Path(sys.executable).with_name("ascenv"))
    with tempfile.TemporaryDirectory() as tmp:
        host = build_host("a2-cann800", Path(tmp))
        env = dict(host.environ, HOME=tmp, PATH=host.environ["PATH"])
        peer = median_time([torch_python, "-m", "torch.utils.collect_env"], dict(os.environ, HOME=tmp), runs=3)
        ours = median_time([ascenv, "doctor", "--root", str(host.root), "--python", torch_python, "--format", "json"], env, runs=5)
    print(f"python -m torch.utils.collect_env: {peer:.2f} s (median of 3)")
    print(f"ascenv doctor (fixture a2-cann800, same interpreter): {ours:.2f} s (median of 5)")
    print(f"ratio doctor / collect_env: {ours / peer:.3f}  (target <= 0.100)")


if __name__ == "__main__":
    main()
