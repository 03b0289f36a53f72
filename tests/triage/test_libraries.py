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


def test_two_shipping_layers_for_one_library_are_an_error():
    one = tool.parse_filelist("a", header("torch") + "torch/lib/libc10.so\n")
    two = tool.parse_filelist("b", header("torch_npu") + "torch_npu/lib/libc10.so\n")
    with pytest.raises(tool.ListError, match="libc10.so is shipped in layer 'torch_npu'"):
        tool.build([one, two])


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
        # the driver's AICPU family, a member no list names
        (
            "error while loading shared libraries: libaicpu_kernels_v2.so: cannot open shared object file",
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
