"""probe.stack: the layer above torch_npu read from files (issue #22 item 5)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ascenv.model import Distribution, PythonInfo
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from ascenv.probe.stack import probe_stack
from tests.fixture_hosts import _Machine, build_host, corpus_sections, write_tilelang_checkout

_NOTES = "version_files/driver25.0.rc1.1_fw7.7.0.1.231_toolkit8.2.RC1_opp_kernel_nnal_mindie2.1.RC1_800IA2-notes.txt"
_T3 = "version_files/mindie-2.0.T3.1-image_version.cfg_driver_atb_mindie_version.info_notes.txt"


def test_a_snapshot_of_a_host_with_nnal_triton_ascend_and_vllm_ascend_records_their_versions(tmp_path):
    host = build_host("vllm-ascend-v0.23.0", tmp_path)
    snap = collect(Root(host.root), host.environ, python=sys.executable)
    parts = {p.name: p for p in snap.stack}
    assert {n: p.version for n, p in parts.items()} == {
        "nnal-atb": "9.1.0",
        "triton-ascend": "3.2.2",
        "vllm-ascend": "0.23.0",
        "vllm": "0.23.0",
    }
    atb = parts["nnal-atb"]
    assert atb.build == "9.1.0.B100" and atb.abi_variants == ("cxx_abi_0", "cxx_abi_1")
    assert atb.abi_selected == "cxx_abi_1" and atb.source == "/usr/local/Ascend/nnal/atb/9.1.0/version.info"
    assert parts["vllm-ascend"].path.endswith("vllm_ascend-0.23.0.dist-info")


@pytest.mark.parametrize(
    ("capture", "section", "atb", "build"),
    [(_NOTES, 5, "8.2.RC1", "8.2.RC1.B150"), (_T3, 5, "8.0.T63", "8.0.T63.B020")],
)
def test_the_recorded_atb_version_files(tmp_path, capture, section, atb, build):
    m = _Machine(tmp_path, "atb")
    text = corpus_sections(capture)[section]
    m.write("/usr/local/Ascend/nnal/atb/latest/version.info", text)  # a copied tree: only latest/
    (part,) = probe_stack(Root(m.root), {}, PythonInfo())
    assert (part.name, part.version, part.build, part.abi_selected) == ("nnal-atb", atb, build, None)


@pytest.mark.parametrize(
    ("capture", "section", "version", "build"),
    [(_NOTES, 6, "2.1.RC1", "2.1.RC1.B152"), (_T3, 4, "2.0.T3", "2.0.T3.B010")],
)
def test_the_recorded_mindie_version_files(tmp_path, capture, section, version, build):
    m = _Machine(tmp_path, "mindie")
    m.write("/usr/local/Ascend/mindie/2.1.RC1/version.info", corpus_sections(capture)[section])
    m.link("/usr/local/Ascend/mindie/latest", "2.1.RC1")
    (part,) = probe_stack(Root(m.root), {}, PythonInfo())
    assert (part.name, part.version, part.build) == ("mindie", version, build)


def test_atb_home_path_selects_a_build_only_of_that_install(tmp_path):
    m = _Machine(tmp_path, "two")
    for version in ("8.5.0", "9.0.0"):
        m.write(f"/usr/local/Ascend/nnal/atb/{version}/version.info", f"Ascend-cann-atb : {version}\n")
        m.mkdir(f"/usr/local/Ascend/nnal/atb/{version}/atb/cxx_abi_0")
        m.mkdir(f"/usr/local/Ascend/nnal/atb/{version}/atb/cxx_abi_1")
    environ = {"ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/9.0.0/atb/cxx_abi_0/"}
    parts = probe_stack(Root(m.root), environ, PythonInfo())
    assert [(p.version, p.abi_selected) for p in parts] == [("8.5.0", None), ("9.0.0", "cxx_abi_0")]


def test_a_user_install_under_home_and_the_first_distribution_on_the_path(tmp_path):
    m = _Machine(tmp_path, "user")
    m.write("/home/dev/Ascend/nnal/atb/9.0.0/version.info", "Ascend-cann-atb Version : 9.0.0.B7\n")
    python = PythonInfo(
        distributions=(
            Distribution("vllm_ascend", "0.22.1rc1", "/venv/site-packages"),
            Distribution("vllm-ascend", "0.11.0", "/usr/lib/python3/dist-packages"),  # shadowed
            Distribution("sglang", "0.5.0", "/venv/site-packages"),
        )
    )
    parts = probe_stack(Root(m.root), {}, python, home="/home/dev")
    assert [(p.name, p.version) for p in parts] == [
        ("nnal-atb", "9.0.0"),
        ("vllm-ascend", "0.22.1rc1"),
        ("sglang", "0.5.0"),
    ]


# --- triton-ascend's compiler, found as its backend finds it ------------------------------------------


def _triton(site: str) -> PythonInfo:
    return PythonInfo(distributions=(Distribution("triton_ascend", "3.2.2", site),))


@pytest.mark.parametrize(
    ("place", "environ", "found"),
    [
        # the wheel's own copy wins over PATH (github:triton-lang/triton-ascend _get_npucompiler_path)
        (
            "/py/site/triton/backends/ascend/bishengir/bin/bishengir-compile",
            {"PATH": "/cann/tools/bishengir/bin"},
            "bundled",
        ),
        (
            "/cann/tools/bishengir/bin/bishengir-compile",
            {"PATH": "relative:/usr/bin:/cann/tools/bishengir/bin"},
            "PATH",
        ),
        (None, {"PATH": "/usr/bin", "TRITON_NPU_COMPILER_PATH": "/opt/npuc"}, "TRITON_NPU_COMPILER_PATH"),
        (None, {"PATH": "/usr/bin"}, "not found"),
    ],
)
def test_triton_ascends_compiler_in_the_order_its_backend_looks(tmp_path, place, environ, found):
    m = _Machine(tmp_path, "triton")
    m.write("/cann/tools/bishengir/bin/.keep", "")
    if place:
        m.write(place, "")
    (part,) = probe_stack(Root(m.root), environ, _triton("/py/site"), live=True)
    assert part.compiler_from == found
    assert part.compiler == (place if place else "/opt/npuc/npuc" if found == "TRITON_NPU_COMPILER_PATH" else None)


def test_under_root_an_absent_compiler_is_left_unjudged(tmp_path):
    m = _Machine(tmp_path, "image")
    (part,) = probe_stack(Root(m.root), {"PATH": "/usr/bin"}, _triton("/py/site"))  # not the live /
    assert (part.compiler, part.compiler_from) == (None, None)


@pytest.mark.parametrize(
    ("name", "directory"),
    [
        ("vllm-ascend", "vllm_ascend-0.9.1.dist-info"),  # the real vllm_ascend-0.9.1 wheel's METADATA Name
        ("triton-ascend", "triton_ascend-0.9.1.dist-info"),  # and triton_ascend-3.2.0's
        ("vllm_ascend", "vllm_ascend-0.9.1.dist-info"),  # a Name already escaped
        ("sglang", "sglang-0.9.1.dist-info"),  # nothing to escape
    ],
)
def test_a_parts_path_is_the_dist_info_the_installer_wrote(name: str, directory: str) -> None:
    from ascenv.probe.stack import python_parts

    (part,) = python_parts(PythonInfo(distributions=(Distribution(name, "0.9.1", "/site"),)))
    assert part.path == f"/site/{directory}" and part.source == f"/site/{directory}/METADATA"


# --- a JIT front-end read from its sources (tilelang-ascend) ---------------------------------------


def _sought():
    from ascenv import compat

    return compat.load().jit_strings()


def test_a_tilelang_checkout_on_pythonpath_is_read_for_the_strings_sought(tmp_path):
    checkout = write_tilelang_checkout(tmp_path, changes=("pr334",))
    environ = {"PYTHONPATH": f"/nowhere:{checkout}"}
    (part,) = probe_stack(Root(str(tmp_path)), environ, PythonInfo(), sought=_sought())
    assert (part.name, part.version, part.path, part.source) == (
        "tilelang",
        "0.1.4",
        "/opt/tilelang-ascend/tilelang",
        "/opt/tilelang-ascend/VERSION",
    )
    assert part.sought == ("bishengir", "adapt-triton-kernel", "adapt_triton_kernel", "pkg_inc")
    assert part.found == ("bishengir", "adapt-triton-kernel")


def test_the_later_layout_and_the_ascend_c_route_are_read_as_they_are(tmp_path):
    # variants: the pass named in the adapter's pass list (npuir, 2026-06), a checkout of the Ascend C
    # route (no bishengir), and a checkout with neither change
    every = ("bishengir", "adapt-triton-kernel", "adapt_triton_kernel", "pkg_inc")
    for name, changes, route, found in (
        ("later", ("pass_list", "pr346"), "npuir", every),
        ("pto", (), "ascendc_pto", ()),
        ("old", (), "npuir", ("bishengir",)),
    ):
        root = tmp_path / name
        checkout = write_tilelang_checkout(root, "/home/dev/tilelang-ascend", changes=changes, route=route)
        (part,) = probe_stack(Root(str(root)), {"PYTHONPATH": checkout}, PythonInfo(), sought=_sought())
        assert part.found == found, name


def test_an_installed_tilelang_is_read_where_no_checkout_is_on_pythonpath(tmp_path):
    site = "/usr/lib/python3/site-packages"
    write_tilelang_checkout(tmp_path, "/src/tl", changes=("pr334", "pr346"))
    (tmp_path / site.lstrip("/")).mkdir(parents=True)
    (tmp_path / "src/tl/tilelang").rename(tmp_path / site.lstrip("/") / "tilelang")
    python = PythonInfo(distributions=(Distribution("tilelang", "0.1.4", site),))
    (part,) = probe_stack(Root(str(tmp_path)), {}, python, sought=_sought())
    assert (part.version, part.path) == ("0.1.4", f"{site}/tilelang")
    assert part.source == f"{site}/tilelang-0.1.4.dist-info/METADATA"
    assert set(part.found or ()) == {"bishengir", "adapt-triton-kernel", "pkg_inc"}
    # a checkout on PYTHONPATH comes first on sys.path: it is the one imported, and read
    checkout = write_tilelang_checkout(tmp_path)
    (part,) = probe_stack(Root(str(tmp_path)), {"PYTHONPATH": checkout}, python, sought=_sought())
    assert part.path == "/opt/tilelang-ascend/tilelang" and part.found == ("bishengir",)


class _CountingRoot(Root):
    """A Root that counts the files read."""

    reads = 0

    def read_text(self, path: str, limit: int = 4 << 20):
        self.reads += 1
        return super().read_text(path, limit)


def test_nothing_sought_reads_nothing_and_a_directory_loop_is_not_followed(tmp_path):
    checkout = write_tilelang_checkout(tmp_path)
    (tmp_path / "opt/tilelang-ascend/tilelang/jit/loop").symlink_to("..")
    root = _CountingRoot(str(tmp_path))
    assert probe_stack(root, {"PYTHONPATH": checkout}, PythonInfo()) == () and root.reads == 0
    (part,) = probe_stack(root, {"PYTHONPATH": checkout}, PythonInfo(), sought=_sought())
    # the VERSION file and the package's two .py files, each once (a followed loop reads them again)
    assert part.found == ("bishengir",) and root.reads == 1 + 3
    # a relative PYTHONPATH entry names the judged process's working directory: not read
    assert probe_stack(Root(str(tmp_path)), {"PYTHONPATH": "opt/tilelang-ascend"}, PythonInfo(), sought=_sought()) == ()


def test_collect_reads_the_front_ends_its_caller_names(tmp_path):
    host = build_host("a3-cann850", tmp_path)
    environ = {**host.environ, "PYTHONPATH": write_tilelang_checkout(Path(host.root))}
    snap = collect(Root(host.root), environ, python=sys.executable, sought=_sought)
    assert [(p.name, p.found) for p in snap.stack if p.name == "tilelang"] == [("tilelang", ("bishengir",))]
    assert not [p for p in collect(Root(host.root), environ, python=sys.executable).stack if p.name == "tilelang"]


def test_compat_data_that_fails_to_load_costs_the_front_ends_not_the_stack(tmp_path):
    host = build_host("vllm-ascend-v0.23.0", tmp_path)

    def broken():
        raise ValueError("compat/stacks.toml: not valid TOML")

    snap = collect(Root(host.root), host.environ, python=sys.executable, sought=broken)
    assert {p.name for p in snap.stack} >= {"nnal-atb", "triton-ascend"}
    assert [e.probe for e in snap.errors if "not valid TOML" in e.message] == ["jit-sources"]
