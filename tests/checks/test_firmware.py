"""ascenv.checks.firmware: the driver and firmware packages accept each other."""

from __future__ import annotations

import pytest

from ascenv import model
from tests.checks.helpers import DRIVER_FILE, findings_of, severities
from tests.checks.helpers import hdk_host as host

# --- ASC-FW-DRIVER -------------------------------------------------------------------------------


def test_recorded_800ia2_driver_and_firmware_accept_each_other():
    (f,) = findings_of(host(), "ASC-FW-DRIVER")
    assert f.severity is model.Severity.OK
    assert "[7.0.0,7.7.99]" in f.found and DRIVER_FILE.path in f.evidence


def test_firmware_outside_the_drivers_range_is_an_error():
    # driver 24.1.rc2 with fw 7.3.0.1.231 outside [7.0.0,7.2.99] broke IPC/UUID.
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
    # a firmware version.info: compatible_version_drv=[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]
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
