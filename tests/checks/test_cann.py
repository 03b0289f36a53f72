"""ascenv.checks.cann: CANN ↔ driver (HDK), a stale `latest`."""

from __future__ import annotations

import pytest

from ascenv import model
from tests.checks.helpers import a2_host, findings_of, replace, shipped_matrix, with_install
from tests.checks.helpers import hdk_host as host

# --- ASC-CANN-DRIVER ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cann, driver, severity, fit",
    [
        ("8.1.RC1", "25.0.rc1.1", "ok", "matched"),
        ("8.2.RC1", "24.1.rc3", "ok", "compatible"),
        ("8.0.0", "25.0.rc1.1", "info", "newer than matched"),  # a2-cann800 fixture host
        ("8.0.0", "23.0.3", "warn", "older than matched"),
        ("8.5.0", "24.1.0", "error", "below minimum"),  # 8.5.x needs HDK >= 25.0.X
        ("9.1.0", "25.0.rc1.1", "error", "incompatible"),  # 9.1.X: 25.0.X explicitly N
    ],
)
def test_cann_driver_grades(cann, driver, severity, fit):
    snap = with_install(host(driver=driver), version=cann)
    (f,) = findings_of(snap, "ASC-CANN-DRIVER", shipped_matrix())
    assert (f.severity.value, f.title) == (severity, f"CANN {cann} with driver {driver}: {fit}")
    assert any(e.startswith("compat: ") for e in f.evidence)


@pytest.mark.parametrize(
    "cann, driver",
    [
        ("9.2.0", "27.0.rc1"),  # newer than every HDK of the data (26.2.RC1)
        ("9.1.1", "26.3.0"),
        ("8.5.0", "26.2.rc1.2"),  # 8.5.0's list names 25.0.X…25.5.X only: it says nothing about 26.2
        ("9.2.0", "25.9.rc1"),  # between two listed columns, named by none
    ],
)
def test_a_driver_no_list_names_is_a_note_without_a_downgrade(cann, driver):
    (f,) = findings_of(with_install(host(driver=driver), version=cann), "ASC-CANN-DRIVER", shipped_matrix())
    assert f.severity is model.Severity.INFO and f.fix == ""
    assert "(data as of 2026-12-01)" in f.found and "documented for CANN" in f.found


def atlas_350(cann, driver="25.7.rc1", name="Ascend950PR"):
    """An Atlas 350 (PCI 0xd806/0x4003, npu-smi Name Ascend950PR) with its own HDK line."""
    chip = model.Chip(npu=0, chip=0, name=name, health="OK", bus_id="0000:01:00.0")
    pci = (model.PciDevice("0000:01:00.0", "0x19e5", "0xd806", "0x19e5", "0x4003"),)
    snap = host(driver=driver, npu__chips=(chip,), npu__driver_version=driver, devices__pci=pci)
    return with_install(snap, version=cann)


@pytest.mark.parametrize("cann", ["9.0.0", "9.1.0", "9.2.0"])
@pytest.mark.parametrize("name", ["Ascend950PR", "Ascend950DT"])
def test_atlas_350_driver_25_7_is_its_own_line_and_published(cann, name):
    # CANN 9.2.0 release note, column "26.0.RC1/25.7.RC1": Y for 9.0.X, 9.1.X and 9.2.0; 25.7.RC1 is the
    # Atlas 350 HDK (MindCluster 26.1.0 note); the A2/A3 HDK 26.0.RC1 must not be advised for this card
    (f,) = findings_of(atlas_350(cann, name=name), "ASC-CANN-DRIVER", shipped_matrix())
    assert f.severity is model.Severity.OK and "26.0.RC1" not in f.fix


def test_atlas_350_driver_newer_than_its_line_is_a_note():
    (f,) = findings_of(atlas_350("9.2.0", driver="25.9.rc1"), "ASC-CANN-DRIVER", shipped_matrix())
    assert f.severity is model.Severity.INFO and f.fix == ""


def test_incompatible_driver_fix_names_the_hdk_and_the_cann_the_driver_allows():
    (f,) = findings_of(with_install(host(), version="9.1.0"), "ASC-CANN-DRIVER", shipped_matrix())
    assert "25.2.X" in f.expected
    assert f.fix.startswith("install the HDK 26.0.RC1 (driver, then firmware) released with CANN 9.1.0")
    assert "keep the driver and use CANN 9.0.1" in f.fix


@pytest.mark.parametrize("cann, driver", [("8.0.T63", "25.0.rc1.1"), ("weird", "25.0.rc1.1"), ("8.0.0", "NA")])
def test_odd_versions_give_not_comparable(cann, driver):
    (f,) = findings_of(with_install(host(driver=driver), version=cann), "ASC-CANN-DRIVER", shipped_matrix())
    assert f.severity is model.Severity.INFO and "not comparable" in f.title


def test_without_matrix_compat_checks_yield_nothing():
    snap = with_install(host(), version="9.1.0")
    assert findings_of(snap, "ASC-CANN-DRIVER") == [] and findings_of(snap, "ASC-DRIVER-CANN") == []


# --- ASC-CANN-LATEST ---------------------------------------------------------------------------------


def two_toolkits(latest_on: str, old="8.1.RC1", new="8.2.RC1") -> model.Snapshot:
    base = "/usr/local/Ascend/ascend-toolkit"
    installs = tuple(
        model.CannInstall(
            path=f"{base}/{v}", kind="toolkit", version=v, links=(f"{base}/latest",) if v == latest_on else ()
        )
        for v in (old, new)
    )
    return replace(a2_host(), cann__installs=installs, cann__active=f"{base}/{latest_on}")


def test_latest_on_the_older_install_warns():
    (f,) = findings_of(two_toolkits("8.1.RC1"), "ASC-CANN-LATEST")
    assert f.severity is model.Severity.WARN
    assert f.fix == "ln -sfn /usr/local/Ascend/ascend-toolkit/8.2.RC1 /usr/local/Ascend/ascend-toolkit/latest"


def test_latest_on_the_newest_is_fine():
    assert findings_of(two_toolkits("8.2.RC1"), "ASC-CANN-LATEST") == []
    assert findings_of(a2_host(), "ASC-CANN-LATEST") == []  # one install


def test_t_build_is_not_comparable():
    (f,) = findings_of(two_toolkits("8.0.T63", old="8.0.T63"), "ASC-CANN-LATEST")
    assert f.severity is model.Severity.INFO and "not comparable" in f.title
