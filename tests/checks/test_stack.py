"""ascenv.checks.stack: driver ↔ firmware ranges, CANN ↔ driver, pending reboot, allowed CANN."""

from __future__ import annotations

import pytest

from ascenv import model
from ascenv.probe.install_files import parse_key_values
from tests.checks.helpers import a2_host, findings_of, replace, severities, shipped_matrix, with_install
from tests.fixture_hosts import _800IA2, corpus_sections

# The Atlas 800I A2 capture: driver 25.0.rc1.1 (compatible_version_fw=[7.0.0,7.7.99]) and
# firmware 7.7.0.1.231 (compatible_version_drv=...,[25.0,25.0.]).
DRIVER_FILE = model.VersionFile("/usr/local/Ascend/driver/version.info", parse_key_values(corpus_sections(_800IA2)[0]))
FIRMWARE_FILE = model.VersionFile(
    "/usr/local/Ascend/firmware/version.info", parse_key_values(corpus_sections(_800IA2)[1])
)


def host(driver="25.0.rc1.1", firmware="7.7.0.1.231", driver_fields=None, firmware_fields=None, **changes):
    driver_file = model.VersionFile(
        DRIVER_FILE.path, driver_fields if driver_fields is not None else DRIVER_FILE.fields
    )
    firmware_file = model.VersionFile(
        FIRMWARE_FILE.path, firmware_fields if firmware_fields is not None else FIRMWARE_FILE.fields
    )
    return a2_host(
        driver=model.DriverInfo(version=driver, path="/usr/local/Ascend/driver", version_file=driver_file, loaded=True),
        firmware=model.FirmwareInfo(version=firmware, source=FIRMWARE_FILE.path, version_file=firmware_file),
        **changes,
    )


# --- ASC-FW-DRIVER -------------------------------------------------------------------------------


def test_recorded_800ia2_driver_and_firmware_accept_each_other():
    (f,) = findings_of(host(), "ASC-FW-DRIVER")
    assert f.severity is model.Severity.OK
    assert "[7.0.0,7.7.99]" in f.found and DRIVER_FILE.path in f.evidence


def test_firmware_outside_the_drivers_range_is_an_error():
    # compat.md §0 rule 4: driver 24.1.rc2 with fw 7.3.0.1.231 outside [7.0.0,7.2.99] broke IPC/UUID.
    snap = host(
        driver="24.1.rc2",
        firmware="7.3.0.1.231",
        driver_fields={"Version": "24.1.rc2", "compatible_version_fw": "[7.0.0,7.2.99]", "package_version": "24.1.rc2"},
        firmware_fields={"Version": "7.3.0.1.231"},
    )
    (f,) = findings_of(snap, "ASC-FW-DRIVER")
    assert f.severity is model.Severity.ERROR
    assert "[7.0.0,7.2.99]" in f.found and "7.3.0.1.231" in f.found
    assert "npu-firmware_24.1.rc2.run" in f.fix


def test_driver_outside_the_firmwares_prefix_ranges_is_an_error():
    # firmware version.info of compat.md §4.3: compatible_version_drv=[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]
    fields = {"Version": "7.5.0.1.129", "compatible_version_drv": "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]"}
    assert severities(host(firmware="7.5.0.1.129", firmware_fields=fields), "ASC-FW-DRIVER") == ["error"]
    assert severities(
        host(
            driver="24.1.rc3",
            firmware="7.5.0.1.129",
            firmware_fields=fields,
            driver_fields={"compatible_version_fw": "[7.0.0,7.5.99]"},
        ),
        "ASC-FW-DRIVER",
    ) == ["ok"]


@pytest.mark.parametrize("firmware", ["NA", "7.x", ""])
def test_odd_firmware_strings_are_not_comparable_not_a_crash(firmware):
    found = findings_of(host(firmware=firmware), "ASC-FW-DRIVER")
    assert [f.severity.value for f in found] == ([] if firmware == "" else ["warn"])
    assert all("not comparable" in f.found for f in found)


def test_no_ranges_no_finding():
    assert findings_of(host(driver_fields={"Version": "25.0.rc1.1"}, firmware_fields={}), "ASC-FW-DRIVER") == []


# --- ASC-DRIVER-REBOOT -----------------------------------------------------------------------------


def test_installed_and_running_driver_differ():
    snap = replace(host(), npu__driver_version="24.1.rc2")
    (f,) = findings_of(snap, "ASC-DRIVER-REBOOT")
    assert f.severity is model.Severity.WARN and "reboot" in f.fix and "24.1.rc2" in f.found and "25.0.rc1.1" in f.found


@pytest.mark.parametrize("running", ["25.0.rc1.1", "25.0.RC1.1", None])
def test_same_driver_in_any_case_or_no_npu_smi_is_quiet(running):
    assert findings_of(replace(host(), npu__driver_version=running), "ASC-DRIVER-REBOOT") == []


def test_unparsable_running_version_is_compared_as_text():
    assert severities(replace(host(), npu__driver_version="unknown"), "ASC-DRIVER-REBOOT") == ["warn"]


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


# --- ASC-DRIVER-CANN (fix suggester for the driver) ---------------------------------------------------


def test_cann_releases_a_driver_allows():
    (f,) = findings_of(host(driver="25.2.0"), "ASC-DRIVER-CANN", shipped_matrix())
    assert f.severity is model.Severity.INFO
    assert "matched: 8.2.RC1" in f.found and "9.1.0" in f.found and "8.0.0" not in f.found.split("; ")[0]
    assert f.title.startswith("driver 25.2.0 allows CANN 9.1.1")


def test_driver_nobody_lists_or_cannot_parse():
    (unknown,) = findings_of(host(driver="1.0.RC1"), "ASC-DRIVER-CANN", shipped_matrix())
    assert unknown.title == "no CANN release lists driver 1.0.RC1"
    (odd,) = findings_of(host(driver="garbage"), "ASC-DRIVER-CANN", shipped_matrix())
    assert "not comparable" in odd.found
