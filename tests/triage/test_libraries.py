"""bin/triage_libraries.py and compat/triage/libraries.toml: the library table is what the saved
file lists of real packages regenerate, its parser reads the lists as published, and triage's
missing-library family uses it for names no hand-kept row knows."""

from __future__ import annotations

import functools
import io
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.checks import load_checks
from ascenv.triage import load, triage
from ascenv.triage.libraries import library_name, load_libraries
from tests.cli_helpers import bin_script

ROOT = Path(__file__).resolve().parents[2]


tool = bin_script("triage_libraries")


@functools.cache
def table():
    return load(known_checks=set(load_checks()))


def header(layer: str = "driver", kind: str = "ships", url: str = "https://example.org/list") -> str:
    return (
        f"# source: a test list\n# retrieved: 2026-12-01\n# package: pkg-{layer}\n# layer: {layer}\n"
        f"# kind: {kind}\n# url: {url}\n"
    )


def test_regenerating_the_table_gives_the_shipped_file():
    assert tool.generate() == tool.OUTPUT.read_text(encoding="utf-8")
    assert tool.main(["--check"]) == 0


def test_every_saved_list_names_its_source():
    lists = sorted(tool.LISTS.glob("*.txt"))
    assert len(lists) >= 10
    for path in lists:
        parsed = tool.parse_filelist(path.name, path.read_text(encoding="utf-8"))
        assert parsed.meta["retrieved"] and parsed.meta["url"].startswith("https://")
        assert any(library_name(p) for p in parsed.paths), path.name


@pytest.mark.parametrize(
    "path, name",
    [
        ("/lib/x86_64-linux-gnu/libz.so.1.2.13", "libz.so"),
        ("torch_npu/lib/libtorch_npu.so", "libtorch_npu.so"),
        ("torch.libs/libgomp-f3febf51.so.1.0.0", "libgomp-f3febf51.so"),
        ("libsemanage.so.2", "libsemanage.so"),
        ("torch/_C.cpython-311-aarch64-linux-gnu.so", None),  # an extension module, no library
        ("/usr/local/Ascend/driver/lib64", None),  # a directory
        ("/etc/hdcBasic.cfg", None),
        ("libfoo.so.conf", None),
    ],
)
def test_library_name(path, name):
    assert library_name(path) == name


def test_record_rows_and_plain_paths_parse_alike():
    record = tool.parse_filelist("r", header() + "pkg/lib/libabc_x.so,sha256=AAA,123\npkg/_C.so,sha256=B,1\n")
    plain = tool.parse_filelist("p", header() + "/usr/lib64/libabc_x.so\n/usr/lib64/aicpu_kernels/\n\n")
    assert record.paths == ("pkg/lib/libabc_x.so", "pkg/_C.so")
    assert plain.paths == ("/usr/lib64/libabc_x.so", "/usr/lib64/aicpu_kernels")


@pytest.mark.parametrize(
    "text, problem",
    [
        ("# source: x\n/usr/lib/libx.so\n", "no '# retrieved:' line"),
        (header(layer="gpu"), "layer: expected one of"),
        (header(kind="copies"), "kind: expected one of"),
        (header(url="http://plain.example"), "url: expected an https:// URL"),
        ("# source x\n", "expected '# key: value'"),
    ],
)
def test_a_bad_list_is_refused_with_its_name(text, problem):
    with pytest.raises(tool.ListError, match=problem):
        tool.parse_filelist("bad.txt", text)


def test_a_shipping_package_wins_over_a_runtime_mount():
    mounts = tool.parse_filelist(
        "m", header("driver", "mounts") + "/usr/lib64/libsemanage.so.2\n/usr/lib64/libdcmi.so\n"
    )
    ships = tool.parse_filelist("s", header("system", "ships") + "/usr/lib/libsemanage.so.2\n")
    libraries, _ = tool.build([mounts, ships])
    layers = {row.name: row.layer for row in libraries}
    assert layers == {"libsemanage.so": "system", "libdcmi.so": "driver"}


def test_two_shipping_layers_for_one_library_go_to_the_lower_one_naming_both():
    # the driver's lib64/common and the CANN runtime both install libc_sec.so (their file lists)
    cann = tool.parse_filelist("c", header("cann") + "x/lib64/libc_sec.so\n")
    driver = tool.parse_filelist("d", header("driver") + "lib64/common/libc_sec.so\n")
    compiler = tool.parse_filelist("k", header("cann_compiler") + "x/lib64/libc_sec.so\nx/libge_runner.so\n")
    for order in ([cann, driver, compiler], [compiler, driver, cann]):
        libraries, _ = tool.build(order)
        rows = {row.name: row for row in libraries}
        assert rows["libc_sec.so"].layer == "driver"
        sec = rows["libc_sec.so"]
        assert {"pkg-driver", "pkg-cann", "pkg-cann_compiler"} == {sec.package, *sec.also}
        assert rows["libge_runner.so"].layer == "cann_compiler"
    # a system library a package bundles stays the OS's
    system = tool.parse_filelist("s", header("system") + "/lib/libz.so.1\n")
    torch = tool.parse_filelist("t", header("torch") + "torch/lib/libz.so.1\n")
    assert [r.layer for r in tool.build([torch, system])[0]] == ["system"]
    assert set(tool.PRECEDENCE) == set(tool.LAYERS)


CSV_HEADER = "module,operation,relative_path_in_pkg,relative_install_path,is_in_docker,permission\n"


def test_a_cann_filelist_gives_the_installed_libraries_only():
    text = (
        header("cann")
        + "# format: cann-filelist\n"
        + CSV_HEADER
        + (
            "runtime,mkdir,NA,runtime/lib64,TRUE,750\n"
            "lib64,copy,runtime/lib64/libascendcl.so,aarch64-linux/lib64/libascendcl.so,TRUE,440\n"
            "lib64,copy,runtime/lib64/stub/linux/aarch64/libascend_hal.so,aarch64-linux/devlib/linux/aarch64/libascend_hal.so,TRUE,440\n"
            "old,del,NA,aarch64-linux/lib64/libgone.so,TRUE,440\n"
            "sim,move,toolkit/tools/lib/libtsch.so,aarch64-linux/simulator/lib/libtsch.so,TRUE,440\n"
        )
    )
    parsed = tool.parse_filelist("f", text)
    # the driver stub under devlib/ is not the driver's library; a del row installs nothing
    assert parsed.paths == ("aarch64-linux/lib64/libascendcl.so", "aarch64-linux/simulator/lib/libtsch.so")
    with pytest.raises(tool.ListError, match="expected a CANN filelist.csv header"):
        tool.parse_filelist("g", header("cann") + "# format: cann-filelist\nfilepath\nlibx.so\n")
    with pytest.raises(tool.ListError, match="format: expected one of"):
        tool.parse_filelist("h", header("cann") + "# format: yaml\n")


def test_a_tree_listing_gives_full_paths():
    text = (
        header("driver")
        + "# format: tree\n"
        + (
            "driver\n|-- include\n|   `-- dcmi_interface_api.h\n`-- lib64\n    |-- common\n    |   `-- libc_sec.so\n"
            "    `-- driver\n        |-- libascend_hal.so\n        `-- libdcmi.so -> libdcmi.so.1\n"
            "\n4 directories, 4 files\n"
        )
    )
    assert tool.parse_filelist("t", text).paths == (
        "driver/include",
        "driver/include/dcmi_interface_api.h",
        "driver/lib64",
        "driver/lib64/common",
        "driver/lib64/common/libc_sec.so",
        "driver/lib64/driver",
        "driver/lib64/driver/libascend_hal.so",
        "driver/lib64/driver/libdcmi.so",
    )


def test_every_layer_of_the_stack_has_a_real_list():
    layers = {
        tool.parse_filelist(p.name, p.read_text(encoding="utf-8")).meta["layer"]
        for p in tool.LISTS.glob("*.txt")
        if "# kind: ships" in p.read_text(encoding="utf-8")
    }
    assert {"driver", "cann", "cann_compiler", "nnal", "torch", "torch_npu", "system"} <= layers


def test_a_family_needs_two_members_and_no_other_layer():
    driver = tool.parse_filelist("d", header("driver") + "libaicpu_a.so\nlibaicpu_b.so\nlibdrv_x.so\n")
    torch = tool.parse_filelist("t", header("torch") + "libtorch_cpu.so\nlibtorch_python.so\n")
    torch_npu = tool.parse_filelist("n", header("torch_npu") + "libtorch_npu.so\n")
    _, families = tool.build([driver, torch, torch_npu])
    # libtorch_* would also take libtorch_npu.so of another layer; libdrv_ has one member
    assert [(f.name, f.layer) for f in families] == [("libaicpu_*.so*", "driver")]


def test_rendered_table_loads(tmp_path):
    lists = [
        tool.parse_filelist("d.txt", header("driver") + "/usr/lib64/libaicpu_a.so\n/usr/lib64/libaicpu_b.so\n"),
        tool.parse_filelist("s.txt", header("system") + '/lib/libq"uote.so\n'),
    ]
    (tmp_path / "libraries.toml").write_text(tool.render(*tool.build(lists)), encoding="utf-8")
    loaded = load_libraries(tmp_path, ("driver", "system"))
    assert loaded.exact("/x/libaicpu_a.so.1").layer == "driver"  # type: ignore[union-attr]
    assert loaded.exact('libq"uote.so').layer == "system"  # type: ignore[union-attr]
    assert loaded.family("libaicpu_zzz.so").pattern == "libaicpu_*.so*"  # type: ignore[union-attr]
    with pytest.raises(errors.DataFileError, match="layer: expected one of"):
        load_libraries(tmp_path, ("cann",))


def top(text: str):
    result = triage(io.BytesIO(text.encode()), None, None, table())
    assert result.causes, text
    return result.causes[0], " ".join(s.summary for s in result.signatures)


@pytest.mark.parametrize(
    "line, cause, package",
    [
        # libraries only the file lists name (no hand-kept row): the driver's AICPU and DFX libraries
        # the Ascend Docker runtime mounts on Atlas 200I/500 A2 boards
        (
            "OSError: libstackcore.so: cannot open shared object file: No such file or directory",
            "container_no_device",
            "the Ascend driver",
        ),
        (
            "[rank0]: ImportError: libtsd_eventclient.so: cannot open shared object file",
            "container_no_device",
            "the Ascend driver",
        ),
        (
            "加载失败：libaicpu_prof.so: cannot open shared object file: 没有那个文件或目录",
            "container_no_device",
            "the Ascend driver",
        ),
        # the driver's TSD family, a member no list names (libaicpu_* is no family: the CANN
        # compiler component ships libaicpu_*_engine libraries too)
        (
            "error while loading shared libraries: libtsd_client_v2.so: cannot open shared object file",
            "container_no_device",
            "the Ascend driver",
        ),
        # torch_npu's own libraries, from its wheels' RECORD
        (
            "ImportError: libtensorpipe.so: cannot open shared object file: No such file or directory",
            "other",
            "(torch_npu",
        ),
        # torch's, from its wheel
        ("OSError: libshm.so: cannot open shared object file: No such file or directory", "other", "(torch"),
        # CANN 8.1.RC1's filelist.csv: the runtime, hccl and opp components, the compiler component
        (
            "ImportError: libnnopbase.so: cannot open shared object file: No such file or directory",
            "env_not_sourced",
            "CANN toolkit 8.1.RC1, runtime component",
        ),
        ("OSError: libhccl_heterog.so: cannot open shared object file", "env_not_sourced", "hccl component"),
        (
            "[ERROR] 2026-01-02 dlopen libcust_opapi.so failed; libopapi.so: cannot open shared object file",
            "env_not_sourced",
            "opp component (operator package)",
        ),
        (
            "error while loading shared libraries: libge_runner.so: cannot open shared object file",
            "other",
            "CANN toolkit 8.1.RC1, compiler component",
        ),
        # NNAL 8.1.RC1's filelist.csv (libatbops.so: no hand-kept pattern has it)
        ("OSError: libatbops.so: cannot open shared object file", "env_not_sourced", "NNAL 8.1.RC1 (ATB)"),
        # the driver's tree: libqueue_schedule.so (no hand-kept pattern, no mount list)
        (
            "\x1b[31mImportError: libqueue_schedule.so: cannot open shared object file\x1b[0m",
            "container_no_device",
            "the Ascend driver",
        ),
        # the OS's, from Debian's file lists
        (
            "ImportError: libsemanage.so.2: cannot open shared object file: No such file or directory",
            "other",
            "the operating system (libsemanage2)",
        ),
    ],
)
def test_missing_library_read_from_the_file_lists(line, cause, package):
    found, summaries = top(line + "\n")
    assert found.cause == cause, (found.cause, found.detail)
    assert f"{package} ships it" in summaries, summaries


def test_a_library_no_list_and_no_row_knows_is_unknown():
    found, summaries = top("OSError: libnever_heard_of.so.3: cannot open shared object file\n")
    assert "no known Ascend package ships it" in summaries
    assert found.cause == "other" and (found.detail or "").startswith("unknown_library")
