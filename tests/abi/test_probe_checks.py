"""ascenv.probe.abi and ascenv.checks.abi: a site-packages with torch and torch_npu built here,
under a fixture root, probed into a snapshot and judged."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ascenv import model, serde
from ascenv.checks import run_checks
from ascenv.model import Severity
from ascenv.probe.abi import demangle, probe_abi
from ascenv.probe.fs import Root
from ascenv.snapshot_io import snapshot_from_json, snapshot_to_json
from tests.abi.build import build, needs_tools, place, stub_libc

pytestmark = needs_tools

SITE = "/usr/local/lib/python3.11/site-packages"
CANN = "/usr/local/Ascend/ascend-toolkit/latest/lib64"
DECL = "namespace c10 { struct TensorImpl { bool is_contiguous_custom(int) const; int dim() const; }; }\n"
NPU_SRC = DECL + (
    'extern "C" void *aclrtMalloc(unsigned long); extern "C" int HcclInit(void);\n'
    'extern "C" int PyModule_Create2(void);\n'
    "int npu(const c10::TensorImpl &t) { aclrtMalloc(1); return t.is_contiguous_custom(0) + t.dim() + HcclInit()"
    " + PyModule_Create2(); }\n"
)


def c10(d: Path, *, new: bool) -> Path:
    body = "bool c10::TensorImpl::is_contiguous_custom(int) const { return true; }\n" if new else ""
    return build(
        d / ("new" if new else "old") / "libc10.so",
        DECL + body + "int c10::TensorImpl::dim() const { return 1; }\n",
        cxx=True,
        flags=["-nostdlib"],
    )


def site(tmp_path: Path, *, torch_new: bool, with_hccl: bool) -> Path:
    """A root whose site-packages holds torch (with an old or new c10) and torch_npu built against the new one."""
    root, d = tmp_path / "root", tmp_path / "build"
    new_c10 = c10(d, new=True)
    tpy = build(
        d / "libtorch_python.so",
        "extern int c10_dim(void); int tp(void) { return 0; }",
        links=[new_c10],
        flags=["-nostdlib", "-Wl,--no-as-needed", "-Wl,-rpath,$ORIGIN"],
    )
    place(
        root,
        f"{SITE}/torch/_C.cpython-311-x86_64-linux-gnu.so",
        build(
            d / "torch_C.so",
            "extern int tp(void); int init(void) { return tp(); }",
            links=[tpy],
            flags=["-nostdlib", "-Wl,-rpath,$ORIGIN/lib"],
        ),
    )
    place(root, f"{SITE}/torch/lib/libtorch_python.so", tpy)
    place(root, f"{SITE}/torch/lib/libc10.so", new_c10 if torch_new else c10(d, new=False))
    acl = place(
        root,
        f"{CANN}/libascendcl.so",
        build(d / "libascendcl.so", "void *aclrtMalloc(unsigned long n) { return 0; }", nostdlib=True),
    )
    hccl = build(d / "libhccl.so", "int HcclInit(void) { return 0; }", nostdlib=True)
    if with_hccl:
        place(root, f"{CANN}/libhccl.so", hccl)
    # torch_npu's RPATH does not name torch/lib: libc10.so binds by soname to the copy torch loaded
    npu = build(
        d / "libtorch_npu.so", NPU_SRC, cxx=True, links=[new_c10, acl, hccl], flags=["-nostdlib", "-Wl,-rpath,$ORIGIN"]
    )
    place(root, f"{SITE}/torch_npu/lib/libtorch_npu.so", npu)
    place(
        root,
        f"{SITE}/torch_npu/_C.cpython-311-x86_64-linux-gnu.so",
        build(
            d / "npu_C.so",
            "extern int npu_dummy(void); int x(void) { return 0; }",
            links=[npu],
            flags=["-nostdlib", "-Wl,--no-as-needed", "-Wl,-rpath,$ORIGIN/lib"],
        ),
    )
    return root


PY = model.PythonInfo(
    distributions=(
        model.Distribution("torch_npu", "2.8.0", SITE),
        model.Distribution("torch", "2.9.0", SITE),
    )
)
ENV = {"LD_LIBRARY_PATH": f"{CANN}:/usr/local/Ascend/driver/lib64"}


def test_matching_torch_links(tmp_path: Path) -> None:
    abi = probe_abi(Root(site(tmp_path, torch_new=True, with_hccl=True)), PY, ENV)
    assert abi.read and abi.package == "torch-npu 2.8.0"
    assert (abi.unresolved, abi.missing, abi.versions) == ((), (), ())
    assert f"{SITE}/torch/lib/libc10.so" in abi.loaded and f"{CANN}/libhccl.so" in abi.loaded
    findings = {(f.id, f.severity) for f in run_checks(model.Snapshot(abi=abi)) if f.layer == "abi"}
    assert findings == {
        ("ASC-ABI-SYMBOLS", Severity.OK),
        ("ASC-ABI-NEEDED", Severity.OK),
        ("ASC-ABI-GLIBC", Severity.OK),
        ("ASC-ABI-CXX11", Severity.OK),
    }


def test_other_torch_leaves_a_c10_symbol_unbound(tmp_path: Path) -> None:
    abi = probe_abi(Root(site(tmp_path, torch_new=False, with_hccl=True)), PY, ENV)
    assert [(u.symbol, u.expected_from, u.layer) for u in abi.unresolved] == [
        ("_ZNK3c1010TensorImpl20is_contiguous_customEi", "libc10.so", "torch")
    ]
    if shutil.which("c++filt"):
        assert abi.unresolved[0].demangled == "c10::TensorImpl::is_contiguous_custom(int) const"
    (f,) = [f for f in run_checks(model.Snapshot(abi=abi)) if f.id == "ASC-ABI-SYMBOLS"]
    assert f.severity is Severity.ERROR and "torch: 1 (" in f.found and "pip install the torch release" in f.fix
    data = serde.to_data(f)
    assert data["details"]["unresolved"][0]["symbol"] == "_ZNK3c1010TensorImpl20is_contiguous_customEi"
    assert set(data["details"]["unresolved"][0]) >= {"library", "symbol", "demangled", "expected_from", "layer"}
    # the snapshot keeps it: doctor --from a saved snapshot judges the same
    snap = model.Snapshot(abi=abi)
    again = snapshot_from_json(json.loads(json.dumps(snapshot_to_json(snap))), "saved.json")
    assert again.abi == abi


def test_missing_cann_library_is_needed_not_symbols(tmp_path: Path) -> None:
    abi = probe_abi(Root(site(tmp_path, torch_new=True, with_hccl=False)), PY, ENV)
    assert [(m.name, m.layer) for m in abi.missing] == [("libhccl.so", "cann")]
    # libtorch_npu.so has a RUNPATH ($ORIGIN): LD_LIBRARY_PATH is searched before it
    assert abi.missing[0].searched[:3] == (CANN, "/usr/local/Ascend/driver/lib64", f"{SITE}/torch_npu/lib")
    findings = [f for f in run_checks(model.Snapshot(abi=abi)) if f.layer == "abi"]
    assert {(f.id, f.severity) for f in findings} == {
        ("ASC-ABI-NEEDED", Severity.ERROR),
        ("ASC-ABI-SYMBOLS", Severity.OK),  # HcclInit belongs to the missing library: one finding, not two
        ("ASC-ABI-GLIBC", Severity.OK),
        ("ASC-ABI-CXX11", Severity.OK),
    }
    (needed,) = [f for f in findings if f.id == "ASC-ABI-NEEDED"]
    assert "ascend-toolkit/set_env.sh" in needed.fix and needed.details is not None
    assert needed.found.startswith(
        "needed by libtorch_npu.so; searched /usr/local/Ascend/ascend-toolkit/latest/lib64, "
    )
    # without the recorded LD_LIBRARY_PATH, CANN's libascendcl.so is missing too
    abi = probe_abi(Root(site(tmp_path / "again", torch_new=True, with_hccl=True)), PY, {})
    assert {m.name for m in abi.missing} == {"libascendcl.so", "libhccl.so"}


def test_no_torch_npu_reads_nothing(tmp_path: Path) -> None:
    py = model.PythonInfo(distributions=(model.Distribution("torch", "2.9.0", SITE),))
    assert probe_abi(Root(tmp_path), py, ENV) == model.AbiInfo()
    assert [f for f in run_checks(model.Snapshot()) if f.layer == "abi"] == []


def test_glibc_finding_names_both_versions() -> None:
    v = model.AbiMissingVersion(
        "/s/torch_npu/lib/libtorch_npu.so", "GLIBC_2.38", "libc.so.6", "/lib/libc.so.6", "GLIBC_2.36", "glibc"
    )
    snap = model.Snapshot(abi=model.AbiInfo(read=True, package="torch-npu 2.8.0", versions=(v,), imported=(v.library,)))
    (f,) = [f for f in run_checks(snap) if f.id == "ASC-ABI-GLIBC"]
    assert f.severity is Severity.ERROR
    assert "GLIBC_2.36" in f.found and "GLIBC_2.38" in f.expected
    assert f.details is not None and f.details.versions == (v,)


def test_demangle_without_cxxfilt_keeps_names() -> None:
    def missing(argv: object, **kw: object) -> object:
        from ascenv.proc import Completed

        return Completed(("c++filt",), "not-found", None, "", "no c++filt", 0.0)

    assert demangle(["_ZN3c104impl3fooEv"], missing) == {}  # type: ignore[arg-type]
    assert demangle([]) == {}


def test_older_snapshot_without_abi_reads(tmp_path: Path) -> None:
    data = snapshot_to_json(model.Snapshot())
    data.pop("abi")
    assert snapshot_from_json(data, "old.json").abi == model.AbiInfo()
    assert dataclasses.fields(model.AbiInfo)[0].name == "read"


def test_library_the_import_does_not_open_is_a_warning(tmp_path: Path) -> None:
    root, d = site(tmp_path, torch_new=True, with_hccl=True), tmp_path / "build"
    atb = build(
        d / "libatb.so", "namespace atb { int GroupTopk(int k) { return k; } }\n", cxx=True, flags=["-nostdlib"]
    )
    plugin = build(
        d / "libop_plugin_atb.so",
        "namespace atb { int GroupTopk(int); }\nint plug() { return atb::GroupTopk(2); }\n",
        cxx=True,
        links=[atb],
        flags=["-nostdlib", "-Wl,-rpath,$ORIGIN"],
    )
    place(root, f"{SITE}/torch_npu/lib/libop_plugin_atb.so", plugin)
    abi = probe_abi(Root(root), PY, ENV)
    assert f"{SITE}/torch_npu/lib/libop_plugin_atb.so" in abi.loaded
    assert f"{SITE}/torch_npu/lib/libop_plugin_atb.so" not in abi.imported
    assert f"{SITE}/torch_npu/lib/libtorch_npu.so" in abi.imported
    (f,) = [f for f in run_checks(model.Snapshot(abi=abi)) if f.id == "ASC-ABI-NEEDED"]
    assert (f.severity, f.title) == (Severity.WARN, "libatb.so is found nowhere ld.so looks (nnal)")
    # NNAL installed but older: the symbol is missing, a warning too (the import still works)
    place(
        root,
        "/usr/local/Ascend/nnal/atb/latest/lib/libatb.so",
        build(d / "old/libatb.so", "namespace atb { int Other() { return 0; } }\n", cxx=True, flags=["-nostdlib"]),
    )
    env = {"LD_LIBRARY_PATH": ENV["LD_LIBRARY_PATH"] + ":/usr/local/Ascend/nnal/atb/latest/lib"}
    abi = probe_abi(Root(root), PY, env)
    (f,) = [f for f in run_checks(model.Snapshot(abi=abi)) if f.id == "ASC-ABI-SYMBOLS"]
    assert f.severity is Severity.WARN and f.details is not None
    assert [(u.symbol, u.expected_from, u.layer) for u in f.details.unresolved] == [
        ("_ZN3atb9GroupTopkEi", "libatb.so", "nnal")
    ]


@pytest.mark.parametrize("consumer_abi", ["0", "1"])
def test_atb_of_the_other_cxx_abi(tmp_path: Path, consumer_abi: str) -> None:
    root, d = site(tmp_path, torch_new=True, with_hccl=True), tmp_path / "build"
    provider_abi = "1" if consumer_abi == "0" else "0"
    decl = "#include <string>\nnamespace atb { int Setup(const std::string &name); }\n"
    atb = build(
        d / "libatb.so",
        decl + "int atb::Setup(const std::string &name) { return (int)name.size(); }\n",
        cxx=True,
        flags=[f"-D_GLIBCXX_USE_CXX11_ABI={provider_abi}"],
    )
    plugin = build(
        d / "libop_plugin_atb.so",
        decl + 'int plug() { return atb::Setup("topk"); }\n',
        cxx=True,
        links=[atb],
        flags=[f"-D_GLIBCXX_USE_CXX11_ABI={consumer_abi}", "-Wl,--no-as-needed"],
    )
    place(root, f"{SITE}/torch_npu/lib/libop_plugin_atb.so", plugin)
    lib = f"/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_{provider_abi}/lib"
    place(root, f"{lib}/libatb.so", atb)
    abi = probe_abi(Root(root), PY, {"LD_LIBRARY_PATH": f"{ENV['LD_LIBRARY_PATH']}:{lib}"})
    (u,) = [u for u in abi.unresolved if u.layer == "nnal"]
    assert u.other_abi_in == f"{lib}/libatb.so" and u.other_abi_twin is not None
    assert ("__cxx11" in u.symbol) == (consumer_abi == "1") != ("__cxx11" in u.other_abi_twin)
    findings = {f.id: f for f in run_checks(model.Snapshot(abi=abi)) if f.layer == "abi"}
    f = findings["ASC-ABI-CXX11"]
    assert f.severity is Severity.WARN  # the plugin is opened by an ATB operator, not by the import
    assert f"cxx_abi_{consumer_abi}/lib" in f.fix
    assert findings["ASC-ABI-SYMBOLS"].severity is Severity.OK  # reported once, as the ABI mismatch


def test_probe_runs_on_a_fleet_nodes_python_37(tmp_path: Path) -> None:
    # fleet nodes run the probe on their own Python, as old as 3.7 (ascenv/fleet/bundle.py)
    py37 = Path("/root/.pyenv/versions/3.7.16/bin/python3.7")
    if not py37.exists():
        pytest.skip("no Python 3.7 at /root/.pyenv/versions/3.7.16")
    root = site(tmp_path, torch_new=False, with_hccl=True)
    code = (
        "from ascenv import model; from ascenv.probe.fs import Root; from ascenv.probe.abi import probe_abi\n"
        f"py = model.PythonInfo(distributions=(model.Distribution('torch_npu', '2.8.0', {SITE!r}),"
        f" model.Distribution('torch', '2.9.0', {SITE!r})))\n"
        f"abi = probe_abi(Root({str(root)!r}), py, {ENV!r})\n"
        "print(' '.join(u.symbol for u in abi.unresolved))\n"
    )
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [str(py37), "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(repo)}, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["_ZNK3c1010TensorImpl20is_contiguous_customEi"]


def test_a_cut_library_is_said_not_silently_absent(tmp_path: Path) -> None:
    root = site(tmp_path, torch_new=True, with_hccl=True)
    hccl = root / CANN.lstrip("/") / "libhccl.so"
    hccl.write_bytes(hccl.read_bytes()[:200])  # the ELF header survives, the section headers do not
    abi = probe_abi(Root(root), PY, ENV)
    assert [m.name for m in abi.missing] == ["libhccl.so"]
    assert len(abi.problems) == 1 and abi.problems[0].startswith(f"{CANN}/libhccl.so: ")
    warned = [
        f for f in run_checks(model.Snapshot(abi=abi)) if f.id == "ASC-ABI-SYMBOLS" and f.severity is Severity.WARN
    ]
    assert len(warned) == 1 and f"{CANN}/libhccl.so" in warned[0].found


def test_custom_operator_vendor_libraries_are_read(tmp_path: Path) -> None:
    root, d = site(tmp_path, torch_new=True, with_hccl=True), tmp_path / "build"
    acl = build(
        d / "full/libascendcl.so",
        "int aclnnAddCustom(void) { return 0; }\nint aclInit(void) { return 0; }\n",
        nostdlib=True,
    )
    opapi = build(
        d / "libcust_opapi.so",
        "extern int aclnnAddCustom(void); int run(void) { return aclnnAddCustom(); }",
        links=[acl],
        nostdlib=True,
    )
    vendor_dir = "/usr/local/Ascend/ascend-toolkit/latest/opp/vendors/customize"
    place(root, f"{vendor_dir}/op_api/lib/libcust_opapi.so", opapi)
    machine = os.uname().machine
    other = "aarch64" if machine != "aarch64" else "x86_64"
    vendor = model.Vendor(
        name="customize",
        path=vendor_dir,
        origin="config.ini",
        priority=0,
        libraries=(
            model.VendorLibrary("opapi", "op_api/lib/libcust_opapi.so", None, machine),
            model.VendorLibrary("proto", f"op_proto/lib/linux/{other}/libcust_opsproto_rt2.0.so", other, other),
        ),
    )
    abi = probe_abi(Root(root), PY, ENV, vendors=[vendor], machine="ignored: torch_npu's _C decides")
    assert f"{vendor_dir}/op_api/lib/libcust_opapi.so" in abi.loaded
    assert not any(other in p for p in abi.loaded)  # the other architecture's library is not read
    # the root's libascendcl.so lacks the operator's aclnn function: CANN fails when it opens it
    (f,) = [f for f in run_checks(model.Snapshot(abi=abi)) if f.id == "ASC-ABI-SYMBOLS"]
    assert f.severity is Severity.WARN and f.details is not None
    assert [(u.symbol, u.expected_from, u.layer) for u in f.details.unresolved] == [
        ("aclnnAddCustom", "libascendcl.so", "cann")
    ]
    # without torch_npu, the vendors alone are still read
    alone = probe_abi(Root(root), model.PythonInfo(), ENV, vendors=[vendor], machine=machine)
    assert alone.read and alone.package == "custom operators" and alone.imported == ()
    assert [u.symbol for u in alone.unresolved] == ["aclnnAddCustom"]


def test_torch_fix_comes_from_the_compat_data(tmp_path: Path) -> None:
    from tests.checks.helpers import shipped_matrix

    abi = probe_abi(Root(site(tmp_path, torch_new=False, with_hccl=True)), PY, ENV)
    python = model.PythonInfo(
        platform="linux-aarch64",
        distributions=(
            model.Distribution("torch_npu", "2.5.1.post1", SITE),
            model.Distribution("torch", "2.9.0", SITE),
        ),
    )
    snap = model.Snapshot(abi=abi, python=python)
    (f,) = [f for f in run_checks(snap, shipped_matrix()) if f.id == "ASC-ABI-SYMBOLS"]
    assert f.fix.startswith("pip install torch==2.5.1  # the torch torch_npu 2.5.1.post1 is built for")
    # a torch_npu the data does not know: the words, not a version
    unknown = dataclasses.replace(
        snap, python=dataclasses.replace(python, distributions=(model.Distribution("torch_npu", "9.9.9", SITE),))
    )
    (f,) = [f for f in run_checks(unknown, shipped_matrix()) if f.id == "ASC-ABI-SYMBOLS"]
    assert f.fix.startswith("pip install the torch release torch_npu was built for")


def test_glibc_floor_of_torch_itself_is_reported(tmp_path: Path) -> None:
    root, d = site(tmp_path, torch_new=True, with_hccl=True), tmp_path / "build"
    new = stub_libc(d / "newc", {"GLIBC_2.17": ["open"], "GLIBC_2.38": ["fresh"]})
    place(root, "/usr/lib/libc.so.6", stub_libc(d / "oldc", {"GLIBC_2.17": ["open"], "GLIBC_2.31": ["close"]}))
    # torch's libshm-like library, loaded by the import through torch's _C, needs glibc 2.38
    tpy = build(
        d / "glibc/libtorch_python.so",
        "extern int fresh(void); int tp(void) { return fresh(); }",
        links=[new],
        flags=["-nostdlib", "-Wl,-rpath,$ORIGIN"],
    )
    place(root, f"{SITE}/torch/lib/libtorch_python.so", tpy)
    abi = probe_abi(Root(root), PY, ENV)
    assert [(v.library, v.version, v.newest) for v in abi.versions] == [
        (f"{SITE}/torch/lib/libtorch_python.so", "GLIBC_2.38", "GLIBC_2.31")
    ]
    (f,) = [f for f in run_checks(model.Snapshot(abi=abi)) if f.id == "ASC-ABI-GLIBC"]
    assert f.severity is Severity.ERROR and "GLIBC_2.31" in f.found and "GLIBC_2.38" in f.expected


def test_doctor_json_carries_details_unresolved(tmp_path: Path) -> None:
    from ascenv.snapshot_io import dumps_snapshot
    from tests.cli_helpers import run_cli

    abi = probe_abi(Root(site(tmp_path, torch_new=False, with_hccl=True)), PY, ENV)
    saved = tmp_path / "snap.json"
    saved.write_text(dumps_snapshot(model.Snapshot(abi=abi, python=PY)))
    code, out, _ = run_cli(["doctor", "--from", str(saved), "--format", "json"], {})
    assert code == 1  # an error finding
    (f,) = [f for f in json.loads(out)["findings"] if f["id"] == "ASC-ABI-SYMBOLS"]
    (u,) = f["details"]["unresolved"]
    assert u["symbol"] == "_ZNK3c1010TensorImpl20is_contiguous_customEi"
    assert (u["library"], u["expected_from"], u["layer"]) == (
        f"{SITE}/torch_npu/lib/libtorch_npu.so",
        "libc10.so",
        "torch",
    )
    assert "demangled" in u
    code, human, _ = run_cli(["doctor", "--from", str(saved)], {})
    assert "ASC-ABI-SYMBOLS" in human and "torch: 1 (" in human
