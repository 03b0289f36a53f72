"""What importing a project's stack guard costs a package: `python -c "import stack_guard"` (the
module `ascenv check --emit-guard` writes, checking a fixture machine's CANN, driver, torch and
torch_npu from files) and `python -c "import ascenv; ascenv.require(...)"` against a bare
`python -c pass`, medians of interleaved runs of fresh interpreters. Goal: under 5 ms added.

    .venv/bin/python bench/bench_guard_import.py [--runs 31]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from ascenv import constraints  # noqa: E402
from tests.fixture_hosts import build_host  # noqa: E402

RANGES = 'cann = "==8.3.*"\ndriver = ">=25.2.0"\ntorch = ">=2.8"\ntorch_npu = "~=2.8"\npython = ">=3.9"\n'


def timed(argv: list, environ: dict, cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=environ, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=31)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        host = build_host("vllm-ascend-v0.12.0rc1", Path(tmp))
        project = Path(tmp, "project")
        project.mkdir()
        (project / "ascenv.toml").write_text(RANGES)
        declared = constraints.load(project / "ascenv.toml", "ascenv.toml")
        # the fixture machine's files: the emitted guard reads / , so point it at the fixture root
        source = constraints.guard_module(declared).replace("require(who=", f"require(root={str(host.root)!r}, who=", 1)
        (project / "stack_guard.py").write_text(source)
        environ = {k: v for k, v in host.environ.items() if k != "PYTHONPATH"}
        environ["PYTHONPATH"] = os.pathsep.join([host.environ["PYTHONPATH"].split(":")[0], str(ROOT)])
        require = f"import ascenv; ascenv.require(root={str(host.root)!r}, torch_npu='~=2.8', cann='==8.3.*')"
        programs = {
            "bare": [sys.executable, "-c", "pass"],
            "guard": [sys.executable, "-c", "import stack_guard"],
            "require": [sys.executable, "-c", require],
        }
        for argv in programs.values():  # warm the page cache; each must pass on this stack
            timed(argv, environ, str(project))
        times: dict = {name: [] for name in programs}
        for _ in range(args.runs):
            for name, argv in programs.items():
                times[name].append(timed(argv, environ, str(project)))
        # the same work timed inside the child, from before the import to after the check: free of
        # the noise of starting interpreters on a loaded machine
        inside = {
            name: statistics.median(
                float(subprocess.run(
                    [sys.executable, "-c", f"import time; t = time.perf_counter(); {argv[-1]}; "
                     "print(time.perf_counter() - t)"],
                    env=environ, cwd=str(project), check=True, capture_output=True, text=True,
                ).stdout)
                for _ in range(args.runs)
            )
            for name, argv in programs.items()
            if name != "bare"
        }  # fmt: skip
    bare = statistics.median(times["bare"])
    for name in ("guard", "require"):
        median = statistics.median(times[name])
        print(
            f"{name:8} median {median * 1e3:6.1f} ms   bare python {bare * 1e3:6.1f} ms   "
            f"added {(median - bare) * 1e3:5.1f} ms   ratio {median / bare:.2f}   "
            f"timed inside: {inside[name] * 1e3:4.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
