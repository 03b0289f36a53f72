"""ascenv.checks.torch_npu: torch_npu ↔ torch, ↔ CANN, ↔ Python, and the torch_npu suggester."""

from __future__ import annotations

import pytest

from ascenv import model
from tests.checks.helpers import a2_host, findings_of, replace, severities, shipped_matrix, with_install, with_packages


def dist(name, version, *tags):
    return model.Distribution(name, version, "/site", wheel_tags=tags)


def torch_host(torch="2.1.0", npu="2.1.0.post10", cann="8.0.0", python="3.10.12", arch="aarch64", npu_tags=()):
    dists = [dist("torch", torch)] + ([dist("torch_npu", npu, *npu_tags)] if npu else [])
    return with_install(with_packages(a2_host(), *dists, python=python, arch=arch), version=cann)


# --- ASC-TORCH-PAIR ------------------------------------------------------------------------------


def test_matching_pair_is_ok():
    assert severities(torch_host(), "ASC-TORCH-PAIR", shipped_matrix()) == ["ok"]


@pytest.mark.parametrize("torch", ["2.2.0", "2.1.1", "2.10.0"])
def test_other_torch_release_is_an_error(torch):
    (f,) = findings_of(torch_host(torch=torch), "ASC-TORCH-PAIR", shipped_matrix())
    assert (
        f.severity is model.Severity.ERROR and f.title == f"torch_npu 2.1.0.post10 needs torch 2.1.0, torch is {torch}"
    )
    assert f.fix.startswith("pip install torch==2.1.0 ")  # aarch64 wheels pin plain torch==2.1.0


def test_plain_pypi_torch_on_x86_64_against_a_cpu_pin_warns():
    (f,) = findings_of(torch_host(arch="x86_64"), "ASC-TORCH-PAIR", shipped_matrix())
    assert f.severity is model.Severity.WARN and "torch==2.1.0+cpu" in f.fix and "<your CPU wheel index>" in f.fix
    assert severities(torch_host(torch="2.1.0+cpu", arch="x86_64"), "ASC-TORCH-PAIR", shipped_matrix()) == ["ok"]


def test_exact_pin_from_2_12_accepts_plain_torch_on_x86_64():
    snap = torch_host(torch="2.12.0", npu="2.12.0", cann="9.1.0", arch="x86_64")
    assert severities(snap, "ASC-TORCH-PAIR", shipped_matrix()) == ["ok"]


def test_rc_post_and_local_labels_mean_the_same_release():
    for npu in ("2.1.0rc1", "2.1.0.post17", "2.1.0+cxx11-abi", "2.1.0.post10+git4ecd50b"):
        assert severities(torch_host(npu=npu), "ASC-TORCH-PAIR") == ["ok"], npu


def test_torch_npu_without_torch_names_the_torch_to_install():
    snap = with_packages(a2_host(), dist("torch_npu", "2.1.0.post10"), arch="x86_64")
    (f,) = findings_of(snap, "ASC-TORCH-PAIR", shipped_matrix())
    assert f.severity is model.Severity.ERROR and f.fix == "pip install torch==2.1.0+cpu"


def test_odd_versions_are_not_comparable():
    (f,) = findings_of(torch_host(torch="nightly"), "ASC-TORCH-PAIR", shipped_matrix())
    assert f.severity is model.Severity.INFO and "not comparable" in f.title


@pytest.mark.parametrize("npu", ["", "xxxx", "2.1.0.post10!!"])
def test_an_unparsable_torch_npu_version_never_crashes_the_python_check(npu):
    # found by the snapshot fuzzer: the wheel list lookup raised InvalidVersion (exit 3)
    assert findings_of(torch_host(npu=npu), "ASC-TORCH-PYTHON", shipped_matrix()) == []


# --- ASC-TORCH-CANN ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "npu, torch, cann, severity",
    [
        ("2.1.0.post10", "2.1.0", "8.0.0", "ok"),  # the README pair
        ("2.1.0.post10", "2.1.0", "8.3.RC1", "ok"),  # PTA 6.0.0 table: 8.0.RC2…8.3.RC1 (documented)
        ("2.7.1.post4", "2.7.1", "9.2.0", "info"),  # no table names CANN 9.2.0 for PTA 26.0.0
        ("2.9.0", "2.9.0", "8.3.RC1", "ok"),  # PTA 7.3.0's own release-note table lists CANN 8.3.RC1
        ("2.9.0", "2.9.0", "8.0.RC2", "info"),  # ... and not 8.0.RC2: not documented, not an error
        ("2.7.1", "2.7.1", "9.0.0", "error"),  # undefined symbol MsprofSysCycleTime (triton-ascend#326)
        ("2.5.1.dev20250218", "2.5.1", "8.1.RC1", "info"),  # a daily: no row
        ("2.1.0.post10", "2.1.0", "8.0.T63", "info"),  # T build: not comparable
    ],
)
def test_torch_npu_against_cann(npu, torch, cann, severity):
    (f,) = findings_of(torch_host(npu=npu, torch=torch, cann=cann), "ASC-TORCH-CANN", shipped_matrix())
    assert f.severity.value == severity


def test_documented_incompatible_is_an_error_citing_its_report_with_a_fix():
    (f,) = findings_of(
        torch_host(npu="2.7.1", torch="2.7.1", cann="9.0.0", python="3.11.7"), "ASC-TORCH-CANN", shipped_matrix()
    )
    assert f.severity is model.Severity.ERROR and "documented incompatible" in f.found
    assert f.source == "https://github.com/triton-lang/triton-ascend/issues/326"
    assert "torch-npu==2.7.1.post4" in f.fix and "use CANN 8.3.RC1" in f.fix


@pytest.mark.parametrize(
    "npu, torch, cann",
    [
        ("2.8.0", "2.8.0", "9.0.0"),  # another PTA 7.2.0 release on 9.0.0: no report, no table
        ("2.7.1.post4", "2.7.1", "8.0.RC3"),  # PTA 26.0.0 with a CANN its table does not list
        ("2.12.0", "2.12.0", "8.5.0"),  # 26.1.X × 8.5.X is a Y, but 2.12.0's line: see the table
    ],
)
def test_a_pair_no_table_names_is_never_a_warning_or_error(npu, torch, cann):
    (f,) = findings_of(torch_host(npu=npu, torch=torch, cann=cann, python="3.11.7"), "ASC-TORCH-CANN", shipped_matrix())
    assert f.severity in (model.Severity.OK, model.Severity.INFO) and f.fix == ""


@pytest.mark.parametrize(
    "npu, torch, words",
    [
        ("2.12.0.post4", "2.12.0", "a release of the 2.12.0 line not in the compatibility data"),
        ("2.7.1.post99", "2.7.1", "a release of the 2.7.1 line not in the compatibility data"),
        ("2.16.0", "2.16.0", "newer than the compatibility data"),
        ("2.12.0.post4+git1234abc", "2.12.0", "a source, daily or private build"),
    ],
)
def test_a_release_missing_from_the_data_is_named_as_such(npu, torch, words):
    (f,) = findings_of(torch_host(npu=npu, torch=torch, cann="9.1.0"), "ASC-TORCH-CANN", shipped_matrix())
    assert f.severity is model.Severity.INFO and words in f.found
    assert ("(as of 2026-12-01" in f.found) is ("+git" not in npu)


def test_no_active_cann_or_no_matrix_no_verdict():
    assert findings_of(torch_host(), "ASC-TORCH-CANN") == []
    one = torch_host()
    two = replace(one, cann__installs=one.cann.installs * 2, cann__active=None)
    assert findings_of(two, "ASC-TORCH-CANN", shipped_matrix()) == []


# --- ASC-TORCH-SUGGEST -----------------------------------------------------------------------------


def test_suggests_the_validated_torch_npu_with_the_pip_command():
    (f,) = findings_of(torch_host(npu=None), "ASC-TORCH-SUGGEST", shipped_matrix())
    assert f.title == "for CANN 8.0.0 and torch 2.1.0: torch_npu 2.1.0.post10 (validated)"
    assert f.fix == "pip install torch==2.1.0 torch-npu==2.1.0.post10"
    (x86,) = findings_of(torch_host(npu=None, arch="x86_64"), "ASC-TORCH-SUGGEST", shipped_matrix())
    assert x86.fix.startswith("pip install torch==2.1.0+cpu torch-npu==2.1.0.post10  # ")


def test_quiet_when_the_best_one_is_installed():
    assert findings_of(torch_host(), "ASC-TORCH-SUGGEST", shipped_matrix()) == []


def test_no_torch_npu_for_this_torch_and_cann_names_the_torch_that_has_one():
    (f,) = findings_of(torch_host(npu=None, torch="2.1.0", cann="9.1.0"), "ASC-TORCH-SUGGEST", shipped_matrix())
    assert f.severity is model.Severity.INFO and "torch 2." in f.found and f.fix.startswith("pip install torch==")


def test_a_mindie_bundle_makes_a_torch_npu_fit():
    # MindIE 2.3.0 pairs CANN 8.5.0 with PTA 7.2.0 for torch 2.1.0 (compat/sources/mindie-2.3.0-instg_0094.en.txt)
    (f,) = findings_of(torch_host(npu=None, torch="2.1.0", cann="8.5.0"), "ASC-TORCH-SUGGEST", shipped_matrix())
    assert f.title == "for CANN 8.5.0 and torch 2.1.0: torch_npu 2.1.0.post17 (window)"


def test_nothing_documented_for_the_cann_is_a_note_without_a_downgrade():
    # CANN 9.2.0: no torch_npu is paired with it in any saved table (data as of 2026-12-01)
    (f,) = findings_of(torch_host(npu=None, torch="2.12.0", cann="9.2.0"), "ASC-TORCH-SUGGEST", shipped_matrix())
    assert f.severity is model.Severity.INFO and "none documented (compatibility data as of 2026-12-01)" in f.found
    assert f.fix == ""


# --- ASC-TORCH-PYTHON -------------------------------------------------------------------------------


def test_wheel_tag_for_another_python_is_an_error():
    snap = torch_host(python="3.11.7", npu_tags=("cp310-cp310-manylinux_2_17_aarch64",))
    (f,) = findings_of(snap, "ASC-TORCH-PYTHON")
    assert f.severity is model.Severity.ERROR and "its wheel tags: 3.10" in f.found
    ok = torch_host(python="3.10.12", npu_tags=("cp310-cp310-manylinux_2_17_aarch64",))
    assert severities(ok, "ASC-TORCH-PYTHON") == ["ok"]


def test_without_wheel_tags_the_pypi_wheel_list_decides():
    # 2.1.0.post6 has cp38–cp310 wheels only (the torch-npu wheel files on the package index)
    snap = torch_host(npu="2.1.0.post6", cann="8.0.RC2", python="3.11.7", arch="x86_64")
    assert severities(snap, "ASC-TORCH-PYTHON", shipped_matrix()) == ["warn"]
    assert findings_of(snap, "ASC-TORCH-PYTHON") == []  # without the matrix nothing is known
