"""The real wheels of tests/abi/test_real_wheels.py, downloaded once with ``pip download --no-deps``
into ``.ascenv/test-wheels`` of the checkout (git-ignored) and kept between runs.

``.ci/run`` runs ``python -m tests.abi.fetch_wheels`` before the tests, so CI has them (and fails
there, with pip's message, when the package index cannot give them).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CACHE = Path(__file__).resolve().parents[2] / ".ascenv" / "test-wheels"
PYTHON = "3.11"
# torch 2.8 and later and torch_npu 2.8.0 are manylinux_2_28 wheels; older ones manylinux2014
PLATFORMS = {
    "aarch64": ("manylinux_2_28_aarch64", "manylinux2014_aarch64"),
    "x86_64": ("manylinux_2_28_x86_64", "manylinux2014_x86_64"),
}
WANTED = [
    (name, version, arch)
    for arch in PLATFORMS
    for name, version in (("torch_npu", "2.8.0"), ("torch", "2.8.0"), ("torch", "2.9.0"))
] + [(name, version, "aarch64") for name, version in (("torch_npu", "2.14.0"), ("torch", "2.13.0"))]


class Unavailable(Exception):
    pass


def wheel(name: str, version: str, arch: str) -> Path:
    """The cached wheel, downloaded first when absent; ``Unavailable`` with pip's last words otherwise."""
    pattern = f"{name}-{version}-*{arch}*.whl"
    found = sorted(CACHE.glob(pattern))
    if found:
        return found[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    platforms = [arg for p in PLATFORMS[arch] for arg in ("--platform", p)]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", *platforms]
    cmd += ["--python-version", PYTHON, f"{name}=={version}", "-d", str(CACHE)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"pip download {name}=={version} ({arch}) failed: {exc}") from exc
    found = sorted(CACHE.glob(pattern))
    if done.returncode or not found:
        raise Unavailable(f"pip download {name}=={version} ({arch}) failed: {done.stderr.strip()[-300:]}")
    return found[0]


def main() -> int:
    for name, version, arch in WANTED:
        try:
            print(f"fetch_wheels: {wheel(name, version, arch).name}")
        except Unavailable as exc:
            print(f"fetch_wheels: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
