"""The ABI check on real wheels from the package index, aarch64 and x86_64, read from any machine:
torch_npu 2.8.0 with the torch it was built for (2.8.0) links; with torch 2.9.0 it leaves exactly the
torch-namespace symbols unbound that ``readelf --dyn-syms -W`` of the same files shows (among them
``c10::TensorImpl::is_contiguous_custom``, the symbol of the sglang report in issue #23). The newest
torch_npu of the index (2.14.0, aarch64) beside torch 2.13.0 misses torch symbols of a namespace the
attribution table does not name (``c10d::``): they are still torch's.

Each pair is unpacked like an image: both wheels' libraries and ``*.dist-info`` in the
site-packages of CANN's container Python (``/usr/local/python3.11.13``, vllm-ascend's images), and
judged by ``ascenv doctor --root`` with no ``--python``: the image's environment is found from its
files. The wheels are downloaded once with ``pip download --no-deps`` into ``.ascenv/test-wheels``
of the checkout (git-ignored; ``tests/abi/fetch_wheels.py`` fills it, ``.ci/run`` calls it). Under
CI=true a wheel that cannot be had fails the test; elsewhere it skips. The x86_64 torch wheels of
the index are its CUDA builds (888 and 900 MB): under 1 GB, so both pairs are read.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from ascenv.abi import symbols
from tests.abi import fetch_wheels
from tests.abi.build import needs_tools, readelf_defined, readelf_undefined
from tests.cli_helpers import run_cli

pytestmark = [needs_tools, pytest.mark.slow]

SITE = "/usr/local/python3.11.13/lib/python3.11/site-packages"
NPU = "2.8.0"
BUILT_FOR, NEWER = "2.8.0", "2.9.0"
_KEEP = ("torch/_C", "torch/lib/", "torch.libs/", "torch_npu/_C", "torch_npu/lib/")
TORCH_SPACES = {"c10", "at", "torch", "caffe2"}


def _wheel(name: str, version: str, arch: str) -> Path:
    try:
        return fetch_wheels.wheel(name, version, arch)
    except fetch_wheels.Unavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {exc}")
        pytest.skip(str(exc))


def _unpack(wheel: Path, site: Path) -> None:
    """The libraries and the dist-info of ``wheel`` into ``site``, once (a marker says it is done)."""
    done = site / f".{wheel.name}.unpacked"
    if done.exists():
        return
    with zipfile.ZipFile(wheel) as z:
        for member in z.namelist():
            top = member.split("/", 1)[0]
            if (member.startswith(_KEEP) and ".so" in member) or (
                top.endswith(".dist-info") and not member.endswith("/")
            ):
                z.extract(member, site)
    done.touch()


def image(arch: str, torch: str, npu: str = NPU) -> Path:
    """A root as an image with torch ``torch`` and torch_npu ``npu`` for ``arch`` in CANN's Python."""
    root = fetch_wheels.CACHE / "roots" / f"{arch}-torch{torch}-npu{npu}"
    site = root / SITE.lstrip("/")
    _unpack(_wheel("torch", torch, arch), site)
    _unpack(_wheel("torch_npu", npu, arch), site)
    link = root / "usr/local/python3"  # as the images: a python3 link beside the versioned directory
    if not link.is_symlink():
        link.symlink_to("python3.11.13")
    return root


def doctor(root: Path) -> dict:
    code, out, err = run_cli(["doctor", "--root", str(root), "--format", "json"], {"PATH": "/usr/bin:/bin"})
    assert code in (0, 1), err
    assert "the Python checked is /usr/local/python3" in err  # the image's, read from its files
    return json.loads(out)


def _unresolved(report: dict, check: str = "ASC-ABI-SYMBOLS") -> list[dict]:
    return [u for f in report["findings"] if f["id"] == check for u in (f.get("details") or {}).get("unresolved", [])]


def _readelf_unbound(root: Path, loaded: list[str], spaces: set[str] = TORCH_SPACES) -> set[str]:
    """readelf's answer: torch-namespace GLOBAL references of torch_npu's libraries that no library of
    torch defines (weak references may stay unbound)."""
    npu_libs = [root / p.lstrip("/") for p in loaded if p.startswith(f"{SITE}/torch_npu/")]
    torch_libs = [root / p.lstrip("/") for p in loaded if p.startswith((f"{SITE}/torch/", f"{SITE}/torch.libs/"))]
    assert npu_libs and torch_libs
    defined = set().union(*(readelf_defined(p) for p in torch_libs))
    wanted = {
        name.split("@", 1)[0]
        for p in npu_libs
        for name in readelf_undefined(p, binds=("GLOBAL",))
        if symbols.top_namespace(name.split("@", 1)[0]) in spaces
    }
    return wanted - defined


@pytest.mark.parametrize("arch", ["aarch64", "x86_64"])
def test_torch_npu_with_the_torch_it_was_built_for_links(arch: str) -> None:
    root = image(arch, BUILT_FOR)
    report = doctor(root)
    snap = report["snapshot"]
    assert {(d["name"], d["version"]) for d in snap["python"]["distributions"]} >= {
        ("torch", BUILT_FOR),
        ("torch_npu", NPU),
    }
    abi = snap["abi"]
    assert abi["package"] == f"torch-npu {NPU}"
    assert f"{SITE}/torch_npu/lib/libtorch_npu.so" in abi["imported"]
    assert f"{SITE}/torch/lib/libtorch_cpu.so" in abi["loaded"]
    # the check did read: CANN and the C runtime are absent from this root, their symbols unbound
    assert len(abi["unresolved"]) > 100
    assert [u for u in abi["unresolved"] if u["layer"] == "torch"] == []
    assert _readelf_unbound(root, abi["loaded"]) == set()
    errors = [f for f in report["findings"] if f["id"] == "ASC-ABI-SYMBOLS" and f["severity"] == "error"]
    assert errors == []


@pytest.mark.parametrize("arch", ["aarch64", "x86_64"])
def test_newer_torch_leaves_readelfs_torch_symbols_unbound(arch: str) -> None:
    root = image(arch, NEWER)
    report = doctor(root)
    abi = report["snapshot"]["abi"]
    unbound = _unresolved(report)
    found = {u["symbol"] for u in unbound if symbols.top_namespace(u["symbol"]) in TORCH_SPACES}
    assert found == _readelf_unbound(root, abi["loaded"])
    assert all(u["layer"] == "torch" for u in unbound if u["symbol"] in found)
    # torch's Python bindings at global scope are torch's too (THPStorage_NewWithStorage, changed in 2.9)
    assert {u["layer"] for u in unbound if "THPStorage" in u["symbol"]} == {"torch"}
    assert any("is_contiguous_custom" in name for name in found)
    # the import fails: libtorch_npu.so (loaded by torch_npu's _C) is among the libraries lacking them
    error = next(f for f in report["findings"] if f["id"] == "ASC-ABI-SYMBOLS" and f["severity"] == "error")
    torch_errors = {u["symbol"] for u in error["details"]["unresolved"] if u["layer"] == "torch"}
    assert any("is_contiguous_custom" in name for name in torch_errors)
    custom = next(u for u in error["details"]["unresolved"] if "is_contiguous_custom" in u["symbol"])
    assert custom["demangled"] == "c10::TensorImpl::is_contiguous_custom(c10::MemoryFormat) const"
    assert custom["library"] == f"{SITE}/torch_npu/lib/libtorch_npu.so"
    assert custom["expected_from"] == "libc10.so"


def test_newest_torch_npu_with_an_older_torch_names_torchs_layer() -> None:
    """torch_npu 2.14.0 (released 2026-10, Requires-Dist torch==2.14.0.*) beside torch 2.13.0: besides
    c10:: and torch:: it misses four c10d:: symbols (torch's distributed namespace, which the namespace
    table did not name); each is torch's, found where c10d's other members are defined, and the fix is
    torch's release. readelf agrees on the set."""
    root = image("aarch64", "2.13.0", "2.14.0")
    report = doctor(root)
    abi = report["snapshot"]["abi"]
    unbound = _unresolved(report)
    assert "unknown" not in {u["layer"] or "unknown" for u in unbound}
    c10d = {u["symbol"] for u in unbound if symbols.top_namespace(u["symbol"]) == "c10d"}
    assert c10d and {u["expected_from"] for u in unbound if u["symbol"] in c10d} == {"libtorch_cpu.so"}
    torch_side = {u["symbol"] for u in unbound if u["layer"] == "torch"}
    assert torch_side == _readelf_unbound(root, abi["loaded"], TORCH_SPACES | {"c10d"})
    error = next(f for f in report["findings"] if f["id"] == "ASC-ABI-SYMBOLS" and f["severity"] == "error")
    assert "torch: 8" in error["found"] and "unknown" not in error["found"]
