"""ascenv.checks.vendors (ABI gate, units) and the ABI gate in ascenv.checks._facts (CANN's IsVendorVersionValid)."""

from __future__ import annotations

import pytest

from ascenv import model
from ascenv.checks._facts import effective_version, opp_abi_ranges
from tests.checks.helpers import a2_host, findings_of, replace, severities, shipped_matrix, with_install

# CANN 8.1.RC1 compiler/version.info (github:leideng/CANN-8.1.RC1@551ed27c:.../compiler/version.info):
# Version=7.7.0.1.238, required_opp_abi_version=">=6.3, <=7.7"; a package built with it records
# custom_opp_compiler_version=7.7.0.1.238 (opproject-refdata vendor_version.info.cann-8.1.RC1).
RUNTIME = dict(
    version="8.1.RC1",
    compiler_version="7.7.0.1.238",
    required_opp_abi_version=">=6.3, <=7.7",
    set_env="/usr/local/Ascend/ascend-toolkit/set_env.sh",
)
VENDORS = "/usr/local/Ascend/ascend-toolkit/8.1.RC1/opp/vendors"


def vendor(compiler="7.7.0.1.238", name="customize", units=("ascend910b",), **kw):
    info = {"custom_opp_compiler_version": compiler} if compiler is not None else {}
    defaults = dict(
        name=name, path=f"{VENDORS}/{name}", origin="config.ini", priority=0, version_info=info, compute_units=units
    )
    return model.Vendor(**{**defaults, **kw})


def host(*vendors, **runtime):
    return replace(with_install(a2_host(), **{**RUNTIME, **runtime}), vendors=vendors)


# --- the gate itself -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [
        ("7.7.0.1.238", 770000),
        ("8.5.0", 850000),
        ("6.3", 630000),
        ("8.2.0.0.201", 820000),
        ("7.5.T11.0.B081", 750000),
        ("9.10.0", 910000),
        ("7", None),
        ("x.7", None),
        ("", None),
    ],
)
def test_effective_version_pads_the_minor_to_five_digits(text, value):
    assert effective_version(text) == value


def test_abi_ranges_as_cann_reads_them():
    assert opp_abi_ranges('">=6.3, <=7.7"') == ((630000, 770000),)
    assert opp_abi_ranges(">=6.3, <=6.4, 6.4") == ((630000, 640000), (640000, 640000))  # metadef's own example
    assert (
        opp_abi_ranges(">=6.3") is None
        and opp_abi_ranges(">=6.3, 7.7") is None
        and opp_abi_ranges(">=a.b, <=7.7") is None
    )


# --- ASC-VENDOR-ABI --------------------------------------------------------------------------------


def test_vendor_built_by_the_runtime_compiler_is_accepted():
    assert severities(host(vendor()), "ASC-VENDOR-ABI") == ["ok"]


def test_vendor_built_by_a_newer_cann_is_silently_skipped():
    (f,) = findings_of(host(vendor("8.2.0.0.201")), "ASC-VENDOR-ABI", shipped_matrix())
    assert f.severity is model.Severity.ERROR and "silently skipped" in f.title
    assert "8.2.0.0.201 (CANN 8.2.RC1)" in f.found and "[630000, 770000]" in f.found
    assert "source /usr/local/Ascend/ascend-toolkit/set_env.sh" in f.fix and "run it with CANN 8.2.RC1" in f.fix
    assert f"{VENDORS}/customize/version.info" in f.evidence


def test_vendor_built_by_an_older_accepted_compiler_is_a_note():
    (f,) = findings_of(host(vendor("7.6.0.1.220")), "ASC-VENDOR-ABI", shipped_matrix())
    assert f.severity is model.Severity.INFO and "(CANN 8.0.0)" in f.found


@pytest.mark.parametrize("compiler, severity", [(None, "info"), ("abc", "error"), ("6.2.0", "error")])
def test_missing_or_unparsable_vendor_version(compiler, severity):
    assert severities(host(vendor(compiler)), "ASC-VENDOR-ABI") == [severity]


def test_unreadable_runtime_range_refuses_every_versioned_vendor():
    (f,) = findings_of(host(vendor(), required_opp_abi_version=">=6.3"), "ASC-VENDOR-ABI")
    assert f.severity is model.Severity.ERROR and "cannot read its own ABI range" in f.title


def test_exempt_unsearched_missing_vendors_and_no_range_give_nothing():
    latest = vendor("9.9.0", path="/usr/local/Ascend/ascend-toolkit/latest/opp_latest/vendors/customize")
    unlisted = vendor("9.9.0", name="old", origin="unlisted", priority=-1)
    gone = vendor("9.9.0", name="gone", exists=False)
    assert findings_of(host(latest, unlisted, gone), "ASC-VENDOR-ABI") == []
    assert findings_of(host(vendor("9.9.0"), required_opp_abi_version=None), "ASC-VENDOR-ABI") == []
    assert findings_of(replace(host(vendor("9.9.0")), cann__active=None, cann__installs=()), "ASC-VENDOR-ABI") == []


# --- ASC-VENDOR-UNITS --------------------------------------------------------------------------------


def test_vendor_for_another_chip_is_an_error():
    (f,) = findings_of(host(vendor(units=("ascend310p",))), "ASC-VENDOR-UNITS", shipped_matrix())
    assert f.severity is model.Severity.ERROR and f.title == "vendor customize has no kernels for ascend910b"
    assert "ASCEND_COMPUTE_UNIT=ascend910b" in f.fix and "Ascend910B4" in f.fix


def test_vendor_with_this_chip_or_without_kernels_or_without_matrix():
    assert severities(host(vendor(units=("ascend310p", "ascend910b"))), "ASC-VENDOR-UNITS", shipped_matrix()) == ["ok"]
    assert findings_of(host(vendor(units=())), "ASC-VENDOR-UNITS", shipped_matrix()) == []
    assert findings_of(host(vendor(units=("ascend310p",))), "ASC-VENDOR-UNITS") == []
