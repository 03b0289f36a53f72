"""ascenv.checks.driver: a pending reboot, the CANN releases a driver allows."""

from __future__ import annotations

import pytest

from ascenv import model
from tests.checks.helpers import findings_of, replace, severities, shipped_matrix
from tests.checks.helpers import hdk_host as host

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
