"""checks.stack: vllm-ascend, triton-ascend, NNAL and MindIE against compat/stacks.toml (issue #22
item 5): documented is ok, a documented requirement not met is an error with its source, nothing
documented is info."""

from __future__ import annotations

import dataclasses

import pytest

from ascenv import model
from tests.checks.helpers import a2_host, findings_of, shipped_matrix, with_install, with_packages

INSTALL_GUIDE = "https://gitcode.com/Ascend/triton-ascend/blob/main/docs/zh/installation_guide.md"
POLICY = (
    "https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/"
    "docs/source/community/versioning_policy.md"
)


def _dist(name: str, version: str, tags: tuple[str, ...] = ()) -> model.Distribution:
    return model.Distribution(name, version, "/usr/lib/python3/site-packages", wheel_tags=tags)


def host(cann: str, *dists: model.Distribution, stack: tuple[model.StackPart, ...] = (), glibc: str = "2.35"):
    """The A2 host with CANN ``cann`` active, these Python distributions and stack parts (the
    Python ones are derived as the probe derives them)."""
    from ascenv.probe.stack import python_parts

    snap = with_packages(with_install(a2_host(), version=cann), *dists)
    snap = model.Snapshot(**{**snap.__dict__, "host": model.HostInfo(arch="aarch64", glibc=glibc)})
    return model.Snapshot(**{**snap.__dict__, "stack": stack + python_parts(snap.python)})


def graded(snap, check_id):
    return [(f.severity.value, f.title) for f in findings_of(snap, check_id, shipped_matrix())]


# --- triton-ascend ------------------------------------------------------------------------------------


def test_a_triton_ascend_that_needs_a_newer_cann_is_an_error_with_its_source():
    snap = host("8.3.RC2", _dist("triton-ascend", "3.2.1"))
    (error,) = findings_of(snap, "ASC-STACK-TRITON", shipped_matrix())
    assert error.severity is model.Severity.ERROR
    assert error.title == "triton-ascend 3.2.1 needs a newer CANN than 8.3.RC2"
    assert error.expected == "CANN 9.0.0" and error.source == INSTALL_GUIDE and error.data_as_of == "2026-12-01"
    assert "pip install triton-ascend==3.2.0rc4" in error.fix  # the release listed for CANN 8.3.RC2


def test_a_table_that_asks_for_a_newer_cann_than_an_official_image_uses_is_a_conflict_not_an_error():
    # Triton-Ascend's guide lists 3.2.1 for CANN 9.0.0; sglang's A2/A3 image (docker/npu.Dockerfile
    # @066209de) installs 3.2.1 FROM the CANN 8.5.0 image: both are cited, a warning, never an error
    snap = host("8.5.0", _dist("triton-ascend", "3.2.1"))
    (warn,) = findings_of(snap, "ASC-STACK-TRITON", shipped_matrix())
    assert warn.severity is model.Severity.WARN
    assert warn.title == "triton-ascend 3.2.1 with CANN 8.5.0: the sources disagree"
    assert warn.source == INSTALL_GUIDE and "sgl-project/sglang" in warn.found and "CANN 9.0.0" in warn.found
    table, image = warn.evidence[1:]  # both sources, as the data cites them
    assert table.startswith(f"compat: {INSTALL_GUIDE} ")
    assert image.startswith("compat: github:sgl-project/sglang@066209dedff55fc4b41bd2ba35c10e558aec22d3:docker/npu")
    assert "pip install triton-ascend==3.2.0" in warn.fix  # the release the table lists for CANN 8.5.0
    # the image speaks for its own CANN release only: 3.2.1 on 8.5.1 keeps the table's error; on 9.0.1
    # vllm-ascend v0.25.1rc1's images pin it (known-good)
    assert [g for g, _ in graded(host("8.5.1", _dist("triton-ascend", "3.2.1")), "ASC-STACK-TRITON")] == ["error"]
    assert graded(host("9.0.1", _dist("triton-ascend", "3.2.1")), "ASC-STACK-TRITON") == [
        ("ok", "triton-ascend 3.2.1 with CANN 9.0.1: known-good (an official image installs both)")
    ]


@pytest.mark.parametrize(
    ("triton", "cann", "grade"),
    [
        ("3.2.0", "8.5.0", "ok"),  # the listed pair
        ("3.2.0rc4", "8.3.RC1", "ok"),  # a row's second CANN (one per line in the served table)
        ("3.2.0rc4", "8.3.rc2", "ok"),  # spelled as install.info writes it
        ("3.2.0rc4", "9.0.0", "info"),  # newer than every listed one: not documented
        ("3.2.0rc4", "8.2.RC1", "error"),  # older than every listed one
        ("3.9.9", "9.0.0", "info"),  # a release the data does not know
    ],
)
def test_triton_ascend_grades_both_ways(triton, cann, grade):
    assert [g for g, _ in graded(host(cann, _dist("triton-ascend", triton)), "ASC-STACK-TRITON")] == [grade]


def test_a_wheel_newer_than_the_glibc_is_an_error_by_its_manylinux_tag():
    snap = host("9.0.0", _dist("triton-ascend", "3.2.1", ("cp311-cp311-manylinux_2_28_aarch64",)), glibc="2.27")
    errors = [f for f in findings_of(snap, "ASC-STACK-TRITON", shipped_matrix()) if f.severity.value == "error"]
    assert [f.title for f in errors] == ["triton-ascend 3.2.1 needs glibc 2.28"] and "pep-0600" in errors[0].source


def test_without_a_tag_the_release_notes_glibc_floor_decides():
    snap = host("8.5.0", _dist("triton-ascend", "3.2.0"), glibc="2.17")
    titles = [t for g, t in graded(snap, "ASC-STACK-TRITON") if g == "error"]
    assert titles == ["triton-ascend 3.2.0 needs glibc 2.27"]
    assert graded(host("8.5.0", _dist("triton-ascend", "3.2.0"), glibc="2.27"), "ASC-STACK-TRITON")[0][0] == "ok"


# --- vllm-ascend ----------------------------------------------------------------------------------


def test_vllm_ascend_with_its_release_row_is_ok():
    dists = (_dist("vllm-ascend", "0.23.0"), _dist("vllm", "0.23.0+empty"), _dist("torch-npu", "2.10.0.post4"))
    assert graded(host("9.1.0", *dists), "ASC-STACK-VLLM") == [("ok", "vllm-ascend 0.23.0 with CANN 9.1.0: documented")]


def test_vllm_ascend_with_another_torch_npu_or_vllm_is_an_error_citing_the_matrix():
    dists = (_dist("vllm-ascend", "0.23.0"), _dist("vllm", "0.22.1"), _dist("torch-npu", "2.10.0"))
    errors = findings_of(host("9.1.0", *dists), "ASC-STACK-VLLM", shipped_matrix())
    assert {f.fix for f in errors if f.severity.value == "error"} == {
        "pip install vllm==0.23.0",
        "pip install torch==2.10.0 torch-npu==2.10.0.post4",
    }
    assert all(f.source == POLICY for f in errors)


def test_vllm_ascend_on_a_cann_its_row_and_images_do_not_name_is_info():
    # v0.23.0rc1's row says 9.0.1; no source says anything of 8.5.1 for it
    found = graded(host("8.5.1", _dist("vllm-ascend", "0.23.0rc1")), "ASC-STACK-VLLM")
    assert found == [("info", "vllm-ascend 0.23.0rc1 with CANN 8.5.1: not documented")]


def test_the_cann_of_a_release_image_is_documented_for_it():
    # v0.25.1rc1 is in no matrix row; its Dockerfile is FROM the 9.0.1-910b image
    assert graded(host("9.0.1", _dist("vllm-ascend", "0.25.1rc1")), "ASC-STACK-VLLM")[0][0] == "ok"
    assert graded(host("9.1.0", _dist("vllm-ascend", "0.25.1rc1")), "ASC-STACK-VLLM")[0][0] == "info"
    assert graded(host("9.1.0", _dist("vllm-ascend", "0.99.0")), "ASC-STACK-VLLM") == [
        ("info", "vllm-ascend 0.99.0 is not in the data")
    ]
    assert graded(host("9.1.0", _dist("vllm-ascend", "0.11.0")), "ASC-STACK-VLLM")[0][0] == "info"
    assert graded(host("8.3.RC2", _dist("vllm-ascend", "0.11.0")), "ASC-STACK-VLLM")[0][0] == "ok"


# --- NNAL and MindIE --------------------------------------------------------------------------------


def _atb(version, variants=("cxx_abi_0", "cxx_abi_1"), selected="cxx_abi_1"):
    path = f"/usr/local/Ascend/nnal/atb/{version}"
    return model.StackPart("nnal-atb", version, path, f"{path}/version.info", None, variants, selected)


def test_nnal_of_the_cann_release_is_ok_another_is_info():
    assert graded(host("9.1.0", stack=(_atb("9.1.0"),)), "ASC-STACK-NNAL")[0][0] == "ok"
    assert graded(host("9.1.0", stack=(_atb("8.2.RC1"),)), "ASC-STACK-NNAL") == [
        ("info", "NNAL 8.2.RC1 with CANN 9.1.0: not documented")
    ]


def test_nnal_with_two_abi_builds_and_none_selected_says_so():
    titles = graded(host("9.1.0", stack=(_atb("9.1.0", selected=None),)), "ASC-STACK-NNAL")
    assert ("info", "NNAL 9.1.0: no C++ ABI build selected") in titles


@pytest.mark.parametrize(("mindie", "cann", "grade"), [("2.3.0", "8.5.0", "ok"), ("2.3.0", "8.3.RC2", "error")])
def test_mindie_on_the_cann_of_its_release(mindie, cann, grade):
    part = model.StackPart(
        "mindie", mindie, "/usr/local/Ascend/mindie/latest", "/usr/local/Ascend/mindie/latest/version.info"
    )
    assert [g for g, _ in graded(host(cann, stack=(part,)), "ASC-STACK-MINDIE")] == [grade]


def test_without_the_layer_nothing_is_said():
    snap = host("9.1.0")
    for check_id in ("ASC-STACK-VLLM", "ASC-STACK-TRITON", "ASC-STACK-NNAL", "ASC-STACK-MINDIE"):
        assert findings_of(snap, check_id, shipped_matrix()) == []


def test_an_official_image_pairing_is_known_good_where_no_table_lists_it():
    # sglang's npu-950.Dockerfile: triton-ascend 3.2.2 wheels on the CANN 9.1.0 image
    assert graded(host("9.1.0", _dist("triton-ascend", "3.2.2")), "ASC-STACK-TRITON") == [
        ("ok", "triton-ascend 3.2.2 with CANN 9.1.0: known-good (an official image installs both)")
    ]
    assert graded(host("9.0.0", _dist("triton-ascend", "3.2.2")), "ASC-STACK-TRITON")[0][0] == "info"
    # a git build of 3.2.0 in an image is not the release 3.2.0: the table still decides
    assert graded(host("8.2.RC1", _dist("triton-ascend", "3.2.0")), "ASC-STACK-TRITON")[0][0] == "error"


def _on(chip: str, snap):
    chips = tuple(dataclasses.replace(c, name=chip) for c in snap.npu.chips)
    return model.Snapshot(**{**snap.__dict__, "npu": dataclasses.replace(snap.npu, chips=chips)})


@pytest.mark.parametrize(
    ("chip", "expected"),
    [
        ("310P3", ("error", "triton-ascend does not compile for ascend310p")),  # ruled out, reported failures
        ("310B4", ("info", "triton-ascend on ascend310b: not documented")),  # neither listed nor ruled out
        ("910B4-1", None),  # Atlas A2: listed
    ],
)
def test_triton_ascend_on_a_chip_family_its_publisher_rules_out(chip, expected):
    snap = _on(chip, host("8.5.0", _dist("triton-ascend", "3.2.0")))
    found = [(f.severity.value, f.title) for f in findings_of(snap, "ASC-STACK-TRITON", shipped_matrix())]
    products = [f for f in found if "compile for" in f[1] or " on ascend" in f[1]]
    assert products == ([expected] if expected else [])
    if expected and expected[0] == "error":
        (error,) = [f for f in findings_of(snap, "ASC-STACK-TRITON", shipped_matrix()) if f.severity.value == "error"]
        assert error.source == "https://github.com/triton-lang/triton-ascend/issues/1002"


def test_a_triton_ascend_without_a_compiler_is_an_error_with_the_set_env_fix():
    snap = host("9.0.0", _dist("triton-ascend", "3.2.1"))
    (triton,) = [p for p in snap.stack if p.name == "triton-ascend"]
    lost = model.Snapshot(**{**snap.__dict__, "stack": (dataclasses.replace(triton, compiler_from="not found"),)})
    errors = [f for f in findings_of(lost, "ASC-STACK-TRITON", shipped_matrix()) if f.severity.value == "error"]
    assert [f.title for f in errors] == ["triton-ascend 3.2.1 finds no bishengir-compile"]
    assert errors[0].fix.startswith("source ") and "triton-ascend" in errors[0].source
    found = dataclasses.replace(triton, compiler="/c/bishengir-compile", compiler_from="PATH")
    ok = model.Snapshot(**{**snap.__dict__, "stack": (found,)})
    assert [f for f in findings_of(ok, "ASC-STACK-TRITON", shipped_matrix()) if f.severity.value == "error"] == []


@pytest.mark.parametrize(("python", "error"), [("3.12.4", False), ("3.13.0", True), ("3.9.18", True)])
def test_vllm_ascend_on_a_python_outside_its_rows_range(python, error):
    snap = host("9.1.0", _dist("vllm-ascend", "0.23.0"))  # row: >= 3.10, < 3.13
    snap = model.Snapshot(**{**snap.__dict__, "python": dataclasses.replace(snap.python, version=python)})
    errors = [f.fix for f in findings_of(snap, "ASC-STACK-VLLM", shipped_matrix()) if f.severity.value == "error"]
    assert errors == (["use a Python >=3.10,<3.13 (a venv or the release image)"] if error else [])


# --- a JIT front-end's sources against the CANN (tilelang-ascend) -----------------------------------

TILELANG_README = "https://github.com/tile-ai/tilelang-ascend/blob/0a17f12e977d3d8d56890729f37566a20fbaa768/README.md"
SOUGHT = ("bishengir", "adapt-triton-kernel", "adapt_triton_kernel", "pkg_inc")


def tilelang(*found: str, sought: tuple[str, ...] = SOUGHT) -> model.StackPart:
    """A tilelang-ascend checkout as the probe records it: which of ``sought`` its sources name."""
    return model.StackPart(
        "tilelang", "0.1.4", "/opt/tilelang-ascend/tilelang", "/opt/tilelang-ascend/VERSION", sought=sought, found=found
    )


def test_a_tilelang_checkout_made_before_cann_8_5_is_an_error_on_it():
    (error,) = findings_of(host("8.5.0", stack=(tilelang("bishengir"),)), "ASC-STACK-JIT", shipped_matrix())
    assert error.severity is model.Severity.ERROR
    assert error.title == (
        "tilelang 0.1.4 lacks what CANN 8.5.0 needs of it: it builds kernels for an older CANN's compiler"
    )
    assert error.found == (
        "/opt/tilelang-ascend/tilelang: no adapt-triton-kernel or adapt_triton_kernel / pkg_inc in its sources"
    )
    assert "pull/334" in error.expected and "pull/346" in error.expected
    assert error.source == TILELANG_README and "git pull" in error.fix and "kernel cache" in error.fix


@pytest.mark.parametrize(
    ("cann", "found", "graded_as"),
    [
        ("8.5.1", ("bishengir", "adapt-triton-kernel"), "error"),  # a patch of the line; PR #346 missing only
        ("8.5.0", ("bishengir", "adapt_triton_kernel", "pkg_inc"), "ok"),  # the later layout's spelling
        ("8.5.0", (), "ok"),  # the Ascend C route: names no bishengir, not concerned
        ("8.3.RC1", ("bishengir",), "info"),  # the CANN it was made for: nothing documented
        ("9.0.0", ("bishengir",), "info"),  # a newer line: nothing documented, never an error
    ],
)
def test_the_changes_are_judged_on_the_cann_line_and_the_route_they_concern(cann, found, graded_as):
    ((grade, title),) = graded(host(cann, stack=(tilelang(*found),)), "ASC-STACK-JIT")
    assert grade == graded_as, title


def test_a_snapshot_that_did_not_read_the_sources_decides_nothing():
    # an older snapshot (or a caller without the compat data) looked for nothing: info, no verdict
    ((grade, title),) = graded(host("8.5.0", stack=(tilelang(sought=()),)), "ASC-STACK-JIT")
    assert (grade, title) == ("info", "tilelang 0.1.4: its sources were not read for what CANN 8.5.X needs of them")
    # no front-end, or no CANN to judge against: nothing to say
    assert graded(host("8.5.0"), "ASC-STACK-JIT") == []
    no_cann = dataclasses.replace(host("8.5.0", stack=(tilelang("bishengir"),)), cann=model.CannInfo())
    assert graded(no_cann, "ASC-STACK-JIT") == []
