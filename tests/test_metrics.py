"""ascenv.metrics: which values of a snapshot and its lock become the labels and samples."""

from __future__ import annotations

from ascenv.lockfile import Lock, LockCheck, LockedCann, Npu, Platform
from ascenv.metrics import STACK_LABELS, stack_metrics
from ascenv.model import Distribution, Finding, PythonInfo, Severity, Snapshot, Vendor


def snap(**changes) -> Snapshot:
    python = PythonInfo(
        executable="/usr/bin/python3",
        distributions=(Distribution("torch_npu", "2.8.0", ""), Distribution("torch", "2.8.0+cpu", "")),
    )
    return Snapshot(**{"python": python, **changes})


MACHINE = Lock(
    platform=Platform(compute_unit="ascend910b"),
    npu=Npu(driver="25.2.0", firmware="7.7.0.1.231"),
    cann=(LockedCann("/a/8.1.RC1", "toolkit", "8.1.RC1"), LockedCann("/a/8.2.RC1", "toolkit", "8.2.RC1", active=True)),
)


def test_stack_labels_come_from_the_machine_lock_and_the_packages():
    m = stack_metrics(snap(), MACHINE, [], [], now=1.0)
    assert dict(m.stack) == {
        "driver": "25.2.0",
        "firmware": "7.7.0.1.231",
        "cann": "8.2.RC1",  # the active install, not the first
        "torch_npu": "2.8.0",
        "torch": "2.8.0+cpu",
        "nnal": "",
        "soc": "ascend910b",
    }
    assert [label for label, _ in m.stack] == list(STACK_LABELS)


def test_an_empty_machine_has_every_label_empty():
    m = stack_metrics(Snapshot(), Lock(), [], [], now=0.0)
    assert dict(m.stack) == dict.fromkeys(STACK_LABELS, "")
    assert m.findings == (("error", 0), ("warn", 0), ("info", 0), ("ok", 0))


def test_findings_are_counted_per_severity():
    findings = [Finding("A", Severity.ERROR, "cann", "a"), Finding("B", Severity.ERROR, "cann", "b")]
    findings.append(Finding("C", Severity.OK, "driver", "c"))
    assert stack_metrics(snap(), MACHINE, findings, [], now=0.0).findings == (
        ("error", 2),
        ("warn", 0),
        ("info", 0),
        ("ok", 1),
    )


def test_a_lock_given_twice_is_one_series_with_the_first_verdict():
    from ascenv.lockfile import Change

    drift = (Change("driver", "version", "changed", "1", "2", Severity.ERROR),)
    checks = [
        LockCheck("a.lock", MACHINE, MACHINE, ()),
        LockCheck("b.lock", MACHINE, MACHINE, drift),
        LockCheck("a.lock", MACHINE, MACHINE, drift),
    ]
    assert stack_metrics(snap(), MACHINE, [], checks, now=0.0).locks == (("a.lock", True), ("b.lock", False))


def test_vendors_list_op_types_sorted_and_skip_missing_trees():
    custom = Vendor(
        "customize",
        "/v/customize",
        "config.ini",
        0,
        ops_info={"ascend910b": ("MatMul", "Add")},
        manifest_digest="f" * 64,
    )
    vendors = (
        custom,
        custom,  # listed twice: one series
        Vendor("gone", "/v/gone", "ASCEND_CUSTOM_OPP_PATH", 1, exists=False),
        Vendor("plain", "/w/plain", "ASCEND_CUSTOM_OPP_PATH", 2, ops_info={"a": ("X",), "b": ("X", "Y")}),
    )
    m = stack_metrics(snap(vendors=vendors), MACHINE, [], [], now=0.0)
    assert [(v.vendor, v.op_types, v.build_sha256) for v in m.vendors] == [
        ("customize", "Add,MatMul", "f" * 64),
        ("plain", "X,Y", ""),
    ]


def test_the_nnal_label_is_the_release_its_version_info_names():
    from dataclasses import replace

    from ascenv.model import StackPart

    atb = StackPart(name="nnal-atb", version="8.5.0", path="/usr/local/Ascend/nnal/atb/8.5.0", source="x/version.info")
    mindie = StackPart(name="mindie", version="2.1.RC1", path="/usr/local/Ascend/mindie/2.1.RC1", source="y")
    m = stack_metrics(replace(snap(), stack=(mindie, atb)), MACHINE, [], [], now=1.0)
    assert dict(m.stack)["nnal"] == "8.5.0"
