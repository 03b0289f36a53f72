"""How long a full probe of a fixture machine takes, against a physical floor.

The floor is what the probe cannot avoid: starting the target interpreter once (the Python
probe runs it) and running the fake npu-smi's queries. The probe must stay well under a second.

    .venv/bin/python bench/bench_probe.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascenv.probe.fs import Root  # noqa: E402
from ascenv.probe.snapshot import collect  # noqa: E402
from tests.fixture_hosts import build_host  # noqa: E402


def best_of(n: int, fn) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        host = build_host("a2-cann800", Path(tmp))
        environ = dict(host.environ, HOME=host.home)
        npu_smi = str(host.bin / "npu-smi")
        queries = [["info"], ["info", "-m"]] + [["info", "-t", "board", "-i", str(i)] for i in range(8)]

        def floor() -> None:
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            for q in queries:
                subprocess.run([npu_smi, *q], capture_output=True)

        def probe() -> None:
            collect(Root(host.root), environ, python=sys.executable)

        probe()  # warm the page cache
        f_best, f_med = best_of(5, floor)
        p_best, p_med = best_of(5, probe)
        print(
            f"floor (interpreter start + {len(queries)} npu-smi calls): "
            f"best {f_best * 1000:.0f} ms, median {f_med * 1000:.0f} ms"
        )
        print(
            f"collect() on a2-cann800:                       best {p_best * 1000:.0f} ms, median {p_med * 1000:.0f} ms"
        )
        print(f"ratio probe/floor: {p_med / f_med:.2f}   (target: the probe well under 1 s)")


if __name__ == "__main__":
    main()
