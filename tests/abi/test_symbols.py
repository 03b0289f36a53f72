"""ascenv.abi.symbols: references bound against a load order, on libraries built here."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ascenv.abi import loader, symbols
from ascenv.abi.tree import Tree
from ascenv.probe.fs import Root
from tests.abi.build import build, needs_tools, place, readelf_undefined, stub_libc

pytestmark = needs_tools

ACL_FULL = "int aclInit(const char *p) { return 0; }\nvoid *aclrtMalloc(unsigned long n) { return 0; }\n"
ACL_OLD = "int aclInit(const char *p) { return 0; }\n"
ACL_USER = (
    "extern int aclInit(const char *); extern void *aclrtMalloc(unsigned long);\n"
    "extern int aclOptional(void) __attribute__((weak));\n"
    "int start(void) { aclrtMalloc(8); return aclInit(0) + (aclOptional ? aclOptional() : 0); }\n"
)


def resolve(root: Path, starts: list[str], **kw: object) -> loader.LoadOrder:
    tree = Tree(Root(root))
    return loader.load(tree, starts, conf=loader.conf_dirs(tree), **kw)  # type: ignore[arg-type]


def test_provider_missing_one_symbol(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    full = build(d / "new/libascendcl.so", ACL_FULL, nostdlib=True)
    place(root, "/usr/local/Ascend/lib64/libascendcl.so", build(d / "old/libascendcl.so", ACL_OLD, nostdlib=True))
    user = place(root, "/opt/torch_npu/lib/libuser.so", build(d / "libuser.so", ACL_USER, links=[full], nostdlib=True))
    order = resolve(root, ["/opt/torch_npu/lib/libuser.so"], ld_library_path=["/usr/local/Ascend/lib64"])
    # the weak aclOptional is absent too, and is no error
    assert symbols.unresolved(order) == (
        symbols.Unresolved("/opt/torch_npu/lib/libuser.so", "aclrtMalloc", None, "libascendcl.so", "cann"),
    )
    # with the library it was built against, everything binds (the check can pass)
    place(root, "/usr/local/Ascend/lib64/libascendcl.so", full)
    assert (
        symbols.unresolved(
            resolve(root, ["/opt/torch_npu/lib/libuser.so"], ld_library_path=["/usr/local/Ascend/lib64"])
        )
        == ()
    )
    # with no provider at all: the unbound set is exactly readelf's non-weak undefined set
    (root / "usr/local/Ascend/lib64/libascendcl.so").write_bytes(
        build(d / "empty/libascendcl.so", "", nostdlib=True).read_bytes()
    )
    order = resolve(root, ["/opt/torch_npu/lib/libuser.so"], ld_library_path=["/usr/local/Ascend/lib64"])
    expected = readelf_undefined(user) - {"aclOptional"}
    assert {u.symbol for u in symbols.unresolved(order)} == expected == {"aclInit", "aclrtMalloc"}


def test_torch_namespace_symbols_name_their_library(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    decl = "namespace c10 { struct TensorImpl { bool is_contiguous_custom(int) const; }; }\n"
    c10_src = decl + "bool c10::TensorImpl::is_contiguous_custom(int) const { return true; }\n"
    at_src = "namespace at { int add(int a, int b) { return a + b; } }\n"
    c10 = build(d / "new/libc10.so", c10_src, cxx=True, flags=["-nostdlib"])
    cpu = build(d / "new/libtorch_cpu.so", at_src, cxx=True, flags=["-nostdlib"])
    user = build(
        d / "libtorch_npu.so",
        decl + "namespace at { int add(int, int); }\n"
        "int use(const c10::TensorImpl &t) { return t.is_contiguous_custom(0) + at::add(1, 2); }\n",
        cxx=True,
        links=[c10, cpu],
        flags=["-nostdlib", "-Wl,-rpath,$ORIGIN/../../torch/lib"],
    )
    place(root, "/site/torch_npu/lib/libtorch_npu.so", user)
    place(
        root,
        "/site/torch/lib/libc10.so",
        build(d / "old/libc10.so", "namespace c10 { int other() { return 0; } }\n", cxx=True, flags=["-nostdlib"]),
    )
    place(root, "/site/torch/lib/libtorch_cpu.so", cpu)
    found = symbols.unresolved(resolve(root, ["/site/torch_npu/lib/libtorch_npu.so"]))
    assert [(u.symbol, u.expected_from, u.layer) for u in found] == [
        ("_ZNK3c1010TensorImpl20is_contiguous_customEi", "libc10.so", "torch")
    ]


@pytest.mark.parametrize(
    ("mangled", "namespace"),
    [
        ("_ZNK3c1010TensorImpl20is_contiguous_customENS_12MemoryFormatE", "c10"),
        ("_ZN2at6native3addERKNS_6TensorE", "at"),
        ("_ZTVN3c1015VariableVersionE", "c10"),
        ("_ZN3atb12CreateOperationERKNS_5infer13GroupTopkParamEPPNS_9OperationE", "atb"),
        ("_ZNSt6vectorIiSaIiEE9push_backERKi", "std"),
        ("_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv", "std"),
        ("_Z3foov", None),
        ("aclrtMalloc", None),
    ],
)
def test_top_namespace(mangled: str, namespace: str | None) -> None:
    assert symbols.top_namespace(mangled) == namespace


def test_glibc_version_newer_than_the_roots_libc(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    new = stub_libc(d / "new", {"GLIBC_2.17": ["open"], "GLIBC_2.36": ["close"], "GLIBC_2.99": ["fresh"]})
    old = stub_libc(d / "old", {"GLIBC_2.17": ["open"], "GLIBC_2.36": ["close", "fresh"]})
    user = build(
        d / "libuser.so",
        "extern int open(void), close(void), fresh(void);\nint u(void) { return open() + close() + fresh(); }\n",
        links=[new],
        nostdlib=True,
    )
    place(root, "/usr/lib/libc.so.6", old)
    place(root, "/opt/libuser.so", user)
    order = resolve(root, ["/opt/libuser.so"])
    assert symbols.missing_versions(order) == (
        symbols.MissingVersion(
            "/opt/libuser.so", "GLIBC_2.99", "libc.so.6", "/usr/lib/libc.so.6", "GLIBC_2.36", "glibc"
        ),
    )
    # fresh@GLIBC_2.99 does not bind to fresh@@GLIBC_2.36: a versioned reference wants its version
    assert [(u.symbol, u.version, u.expected_from, u.layer) for u in symbols.unresolved(order)] == [
        ("fresh", "GLIBC_2.99", "libc.so.6", "glibc")
    ]
    place(root, "/usr/lib/libc.so.6", new)
    order = resolve(root, ["/opt/libuser.so"])
    assert symbols.missing_versions(order) == () and symbols.unresolved(order) == ()


def test_glibc_version_against_a_real_libc(tmp_path: Path) -> None:
    triplet = loader.TRIPLETS.get(os.uname().machine)
    real = Path(f"/lib/{triplet}/libc.so.6")
    if triplet is None or not real.exists():
        pytest.skip("no Debian-layout libc.so.6 on this machine")
    root, d = tmp_path / "root", tmp_path / "build"
    new = stub_libc(d / "new", {"GLIBC_2.99": ["future_call"]})
    place(
        root,
        "/opt/libuser.so",
        build(
            d / "libuser.so",
            "extern int future_call(void); int u(void) { return future_call(); }",
            links=[new],
            nostdlib=True,
        ),
    )
    place(root, f"/usr/lib/{triplet}/libc.so.6", real)
    place(root, f"/usr/lib/{triplet}/{_ld_so(triplet)}", Path(f"/lib/{triplet}/{_ld_so(triplet)}"))
    (missing,) = symbols.missing_versions(
        resolve(
            root,
            ["/opt/libuser.so"],
        ),
        check=["/opt/libuser.so"],
    )
    assert (missing.version, missing.file, missing.layer) == ("GLIBC_2.99", "libc.so.6", "glibc")
    assert missing.newest is not None and missing.newest.startswith("GLIBC_2.")


def _ld_so(triplet: str) -> str:
    return {"x86_64-linux-gnu": "ld-linux-x86-64.so.2", "aarch64-linux-gnu": "ld-linux-aarch64.so.1"}.get(
        triplet, "ld.so"
    )


def _host_cxx_runtime(root: Path) -> None:
    """Copy this machine's libstdc++ and what it needs into the root, where the default search finds them."""
    triplet = loader.TRIPLETS.get(os.uname().machine)
    names = ("libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6", _ld_so(triplet or ""))
    sources = [Path(f"/lib/{triplet}/{n}") for n in names]
    if triplet is None or not all(p.exists() for p in sources):
        pytest.skip("no Debian-layout C++ runtime on this machine")
    for p in sources:
        target = root / f"usr/lib/{triplet}" / p.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)


def test_cxx11_abi_consumer_against_the_other_abi(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    _host_cxx_runtime(root)
    provider = build(
        d / "libatb.so",
        '#include <string>\nnamespace atb { std::string name(const std::string& s) { return s + "!"; } }\n',
        cxx=True,
    )
    src = (
        "#include <string>\nnamespace atb { std::string name(const std::string&); }\n"
        'int use() { return (int)atb::name("x").size(); }\n'
    )
    old_abi = build(d / "libold.so", src, cxx=True, links=[provider], flags=["-D_GLIBCXX_USE_CXX11_ABI=0"])
    same_abi = build(d / "libsame.so", src, cxx=True, links=[provider])
    place(root, "/opt/nnal/atb/lib/libatb.so", provider)
    place(root, "/opt/app/libold.so", old_abi)
    place(root, "/opt/app/libsame.so", same_abi)
    ldp = ["/opt/nnal/atb/lib"]
    found = symbols.unresolved(resolve(root, ["/opt/app/libold.so"], ld_library_path=ldp), check=["/opt/app/libold.so"])
    assert [(u.symbol, u.expected_from, u.layer) for u in found] == [("_ZN3atb4nameERKSs", "libatb.so", "nnal")]
    order = resolve(root, ["/opt/app/libsame.so"], ld_library_path=ldp)
    assert order.missing == ()
    assert symbols.unresolved(order) == ()  # the whole closure binds, the C++ runtime included


def test_missing_dt_needed_is_reported_not_its_symbols_versions(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    hccl = build(d / "libhccl.so", "int HcclCommInitRootInfo(void) { return 0; }", nostdlib=True)
    place(
        root,
        "/opt/libuser.so",
        build(
            d / "libuser.so",
            "extern int HcclCommInitRootInfo(void); int u(void) { return HcclCommInitRootInfo(); }",
            links=[hccl],
            nostdlib=True,
        ),
    )
    order = resolve(root, ["/opt/libuser.so"])
    assert [(m.name, m.needed_by) for m in order.missing] == [("libhccl.so", "/opt/libuser.so")]
    assert [(u.symbol, u.expected_from, u.layer) for u in symbols.unresolved(order)] == [
        ("HcclCommInitRootInfo", "libhccl.so", "cann")
    ]
    assert symbols.missing_versions(order) == ()


def test_host_provided_symbols_are_not_unresolved(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    place(
        root,
        "/opt/_C.so",
        build(
            d / "_C.so", "extern int PyLong_FromLong(long); int u(void) { return PyLong_FromLong(1); }", nostdlib=True
        ),
    )
    order = resolve(root, ["/opt/_C.so"])
    assert [u.layer for u in symbols.unresolved(order)] == ["python"]
    assert symbols.unresolved(order, provided=lambda name: name.startswith("Py")) == ()


@pytest.mark.parametrize(
    ("symbol", "needed", "expected"),
    [
        ("pthread_create", ("libpthread.so.0", "libc.so.6"), ("libpthread.so.0", "glibc")),
        ("dlopen", ("libc.so.6",), ("libc.so.6", "glibc")),
        ("aclrtMalloc", ("libhccl.so", "libascendcl.so"), ("libascendcl.so", "cann")),
        ("_ZN2at4_ops3add4callEv", ("libc10.so", "libtorch_cpu.so"), ("libtorch_cpu.so", "torch")),
        ("mystery", ("libc.so.6",), (None, None)),
        # a C++ function at global scope: its name says whose it is (torch 2.9.0 beside torch_npu 2.8.0)
        (
            "_Z25THPStorage_NewWithStorageP11_typeobjectN3c107StorageENS1_4impl18PyInterpreterStatusEb",
            ("libc10.so", "libtorch_python.so"),
            ("libtorch_python.so", "torch"),
        ),
        ("_Z15THPVariable_WrapRKN2at10TensorBaseE", ("libc10.so",), ("libtorch_python.so", "torch")),
        ("_Z7PyThingv", ("libc.so.6",), (None, "python")),
        ("_Z7mysteryv", ("libc.so.6",), (None, None)),
    ],
)
def test_attribution_of_unversioned_names(
    symbol: str, needed: tuple[str, ...], expected: tuple[object, object]
) -> None:
    from ascenv.elf import DynamicSymbols, ElfFile

    obj = ElfFile("x86_64", 64, True, None, needed, (), (), DynamicSymbols.of(()), (), ())
    assert symbols.attribute(symbol, None, obj) == expected


def test_library_layer() -> None:
    assert [
        symbols.library_layer(n) for n in ("libhccl.so", "libc.so.6", "libtorch_cpu.so", "libatb.so", "libfoo.so")
    ] == [
        "cann",
        "glibc",
        "torch",
        "nnal",
        None,
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("_ZN3atb4nameERKSs", "_ZN3atb4nameERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"),
        ("_ZN3atb4nameB5cxx11Ev".replace("B5cxx11", ""), "_ZN3atb4nameB5cxx11Ev"),
        ("_ZN3Mki2DlC1ERKSsb", "_ZN3Mki2DlC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEb"),
        # at::RecordFunction::before(std::string, long): torch 2.9.0's libtorch_cpu.so has the C++11 one
        (
            "_ZN2at14RecordFunction6beforeESsl",
            "_ZN2at14RecordFunction6beforeENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEl",
        ),
        ("_ZNK3atb7ContextIiE4nameB5cxx11Ev".replace("B5cxx11", ""), "_ZNK3atb7ContextIiE4nameB5cxx11Ev"),
    ],
)
def test_abi_skeleton_joins_the_two_builds_of_a_function(old: str, new: str) -> None:
    assert symbols.abi_skeleton(old) == symbols.abi_skeleton(new)
    # abi_twins skeletons only the definitions whose outer names a reference has: the two builds share them
    assert symbols.outer_names(old) == symbols.outer_names(new) != ""
    assert not symbols.is_cxx11(old) and symbols.is_cxx11(new)


def test_abi_skeleton_keeps_other_functions_apart() -> None:
    assert symbols.abi_skeleton("_ZN3atb4nameERKSs") != symbols.abi_skeleton("_ZN3atb5name2ERKSs")
    assert symbols.abi_skeleton("_ZN3atb4nameERKSs") != symbols.abi_skeleton("_ZN3atb4nameERKi")


# torch 2.14's torch_npu with torch 2.13 (the real wheels, tests/abi/test_real_wheels.py): four
# c10d:: references unbound, a namespace the table does not name; it lives where its other members
# are defined. Variants the wheels do not contain: a namespace of another layer's library, torch_npu's
# own library, and a namespace nothing in the load order defines (stays unattributed).
@pytest.mark.parametrize(
    ("namespace", "home", "expected"),
    [
        ("c10d", "libtorch_cpu.so", ("libtorch_cpu.so", "torch")),
        ("hcom", "libhccl.so", ("libhccl.so", "cann")),
        ("c10_npu", "libtorch_npu.so", ("libtorch_npu.so", "torch_npu")),
        ("nowhere", None, (None, None)),
    ],
)
def test_unknown_namespace_belongs_to_the_library_defining_its_members(
    tmp_path: Path, namespace: str, home: str | None, expected: tuple[object, object]
) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    decl = f"namespace {namespace} {{ struct Work {{ int wait() const; int timeout() const; }}; }}\n"
    old = build(
        d / "old/libhome.so",
        decl + f"int {namespace}::Work::wait() const {{ return 0; }}\n",
        cxx=True,
        flags=["-nostdlib"],
        soname=home or "libother.so",
    )
    user = build(
        d / "libuser.so",
        decl + f"int use(const {namespace}::Work &w) {{ return w.wait() + w.timeout(); }}\n",
        cxx=True,
        links=[old],
        flags=["-nostdlib", "-Wl,-rpath,/site/lib"],
    )
    place(root, "/site/app/libuser.so", user)
    place(root, f"/site/lib/{home or 'libother.so'}", old)  # where the user library's RUNPATH looks
    found = symbols.unresolved(resolve(root, ["/site/app/libuser.so"]))
    assert [(u.symbol.split(namespace)[1][:8], u.expected_from, u.layer) for u in found] == [("4Work7ti", *expected)]


def test_a_split_namespace_belongs_to_the_library_defining_most_of_it(tmp_path: Path) -> None:
    """torch 2.14 defines c10d:: in libtorch_cpu.so and a few of its Python hooks in libtorch_python.so,
    which comes first in torch_npu's load order: the unbound member is libtorch_cpu.so's."""
    root, d = tmp_path / "root", tmp_path / "build"
    decl = "namespace c10d { struct Work { int a() const; int b() const; int c() const; int gone() const; }; }\n"
    one = decl + "int c10d::Work::a() const { return 0; }\n"
    python = build(d / "libtorch_python.so", one, cxx=True, flags=["-nostdlib"])
    cpu = build(
        d / "libtorch_cpu.so",
        decl + "int c10d::Work::b() const { return 0; }\nint c10d::Work::c() const { return 0; }\n",
        cxx=True,
        flags=["-nostdlib"],
    )
    user = build(
        d / "libuser.so",
        decl + "int use(const c10d::Work &w) { return w.a() + w.b() + w.c() + w.gone(); }\n",
        cxx=True,
        links=[python, cpu],
        flags=["-nostdlib", "-Wl,-rpath,/site/lib"],
    )
    place(root, "/site/app/libuser.so", user)
    place(root, "/site/lib/libtorch_python.so", python)
    place(root, "/site/lib/libtorch_cpu.so", cpu)
    found = symbols.unresolved(resolve(root, ["/site/app/libuser.so"]))
    assert [(u.symbol, u.expected_from, u.layer) for u in found] == [
        ("_ZNK4c10d4Work4goneEv", "libtorch_cpu.so", "torch")
    ]
