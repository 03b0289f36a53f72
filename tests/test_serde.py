from typing import Optional

import pytest

from ascenv import errors, model, serde


def test_snapshot_round_trips_through_plain_data():
    snap = model.Snapshot(
        npu=model.NpuInfo(
            driver_version="24.1.rc2.2",
            chips=(model.Chip(npu=0, chip=0, name="910B4", health="OK", bus_id="0000:C1:00.0", hbm_total_mb=32768),),
        ),
        python=model.PythonInfo(
            distributions=(model.Distribution("torch", "2.1.0", "/x", wheel_tags=("cp39-cp39-linux_aarch64",)),)
        ),
        env=model.EnvInfo(paths={"PATH": (model.PathEntry("/bin", exists=True),)}),
    )
    assert serde.from_data(model.Snapshot, serde.to_data(snap)) == snap


@pytest.mark.parametrize(
    "mutate, path, problem",
    [
        (lambda d: d["npu"]["chips"][0].__setitem__("name", 7), "npu.chips[0].name", "expected string"),
        (lambda d: d["npu"]["chips"][0].pop("npu"), "npu.chips[0].npu", "missing"),
        (lambda d: d["npu"].__setitem__("chips", {}), "npu.chips", "expected a list"),
        (lambda d: d["host"].__setitem__("colour", "red"), "host.colour", "unknown key"),
        (lambda d: d["npu"]["chips"][0].__setitem__("npu", True), "npu.chips[0].npu", "expected integer"),
    ],
)
def test_bad_data_names_the_key_path(mutate, path, problem):
    data = serde.to_data(model.Snapshot(npu=model.NpuInfo(chips=(model.Chip(0, 0, "910B", "OK", None),))))
    mutate(data)
    with pytest.raises(errors.SchemaError) as err:
        serde.from_data(model.Snapshot, data)
    assert err.value.path == path
    assert problem in str(err.value)
    assert str(err.value).startswith(path + ":")


def test_enum_and_optional():
    finding = model.Finding("ASC-X", model.Severity.WARN, "cann", "t")
    data = serde.to_data(finding)
    assert data["severity"] == "warn"
    assert serde.from_data(model.Finding, data) == finding
    assert serde.from_data(Optional[int], None) is None
    with pytest.raises(errors.SchemaError, match="expected one of"):
        serde.from_data(model.Severity, "fatal")
