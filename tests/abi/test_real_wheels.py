"""The ABI check on real wheels from the package index (aarch64, read from any machine): torch_npu
with the torch it was built for links; an older torch_npu with that torch leaves exactly the
torch-namespace symbols unbound that readelf of the same files shows.

The wheels are downloaded once with ``pip download --no-deps`` into ``.ascenv/test-wheels`` of
the checkout (git-ignored) and unpacked there like an image's site-packages. Under CI=true a
failed download fails the test; elsewhere it skips.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ascenv import model
from ascenv.abi import symbols
from ascenv.probe.abi import probe_abi
from ascenv.probe.fs import Root
from tests.abi.build import needs_tools, readelf_defined, readelf_undefined

pytestmark = [needs_tools, pytest.mark.slow]

CACHE = Path(__file__).resolve().parents[2] / ".ascenv" / "test-wheels"
PLATFORM = ("--platform", "manylinux2014_aarch64", "--python-version", "3.11", "--only-binary=:all:")
TORCH_SITE = "/usr/local/lib/python3.11/site-packages"
WHEELS = {"torch": "2.5.1", "torch_npu": ("2.5.1", "2.4.0")}
_KEEP = ("torch/_C", "torch/lib/", "torch.libs/", "torch_npu/_C", "torch_npu/lib/")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def _wheel(name: str, version: str) -> Path:
    found = sorted(CACHE.glob(f"{name}-{version}-*.whl"))
    if not found:
        CACHE.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *PLATFORM, f"{name}=={version}", "-d", str(CACHE)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        found = sorted(CACHE.glob(f"{name}-{version}-*.whl"))
        if done.returncode or not found:
            _unavailable(f"pip download {name}=={version} failed: {done.stderr.strip()[-300:]}")
    return found[0]


def _unpack(wheel: Path, site: Path) -> None:
    done = site / f".{wheel.name}.unpacked"
    if done.exists():
        return
    with zipfile.ZipFile(wheel) as z:
        for member in z.namelist():
            if member.startswith(_KEEP) and ".so" in member:
                z.extract(member, site)
    done.touch()


@pytest.fixture(scope="module")
def image() -> Path:
    """One root: torch in the system site-packages, each torch_npu in a site of its own."""
    root = CACHE / "root"
    _unpack(_wheel("torch", WHEELS["torch"]), root / TORCH_SITE.lstrip("/"))
    for version in WHEELS["torch_npu"]:
        _unpack(_wheel("torch_npu", version), root / f"opt/npu-{version}")
    return root


def _python(npu: str) -> model.PythonInfo:
    return model.PythonInfo(
        distributions=(
            model.Distribution("torch_npu", npu, f"/opt/npu-{npu}"),
            model.Distribution("torch", WHEELS["torch"], TORCH_SITE),
        )
    )


def test_torch_npu_with_its_torch_links(image: Path) -> None:
    abi = probe_abi(Root(image), _python("2.5.1"), {})
    assert "/opt/npu-2.5.1/torch_npu/lib/libtorch_npu.so" in abi.imported
    assert f"{TORCH_SITE}/torch/lib/libtorch_cpu.so" in abi.loaded
    assert [u for u in abi.unresolved if u.layer == "torch"] == []
    assert len(abi.unresolved) > 100  # the rest (CANN, glibc: no OS in this root) is unbound: the check did read


def test_older_torch_npu_leaves_readelfs_torch_symbols_unbound(image: Path) -> None:
    abi = probe_abi(Root(image), _python("2.4.0"), {})
    found = {u.symbol for u in abi.unresolved if u.layer == "torch"}
    # the same from readelf: torch-namespace references of torch_npu's libraries no torch library defines
    npu_libs = [image / p.lstrip("/") for p in abi.loaded if p.startswith("/opt/npu-2.4.0/")]
    torch_libs = [image / p.lstrip("/") for p in abi.loaded if p.startswith(TORCH_SITE)]
    defined = set().union(*(readelf_defined(p) for p in torch_libs))
    torch_spaces = {"c10", "at", "torch", "caffe2"}
    wanted = {
        name.split("@", 1)[0]
        for p in npu_libs
        for name in readelf_undefined(p, binds=("GLOBAL",))  # weak references may stay unbound
        if symbols.top_namespace(name.split("@", 1)[0]) in torch_spaces
    }
    assert found == wanted - defined
    assert any("cpu_fallback" in name for name in found)
