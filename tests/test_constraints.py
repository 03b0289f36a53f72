"""ascenv.constraints: a project's declared stack, validated at load (key paths in the errors),
and the verdicts on fixture machines."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascenv import constraints, guard
from ascenv.errors import DataFileError, UsageError
from ascenv.model import Severity
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from tests.checks.helpers import shipped_matrix
from tests.cli_helpers import run_cli
from tests.fixture_hosts import build_host
from tests.key_paths import key_paths

VALID = {
    "project": {"name": "fla-npu"},
    "tool": {
        "ascenv": {
            "cann": ">=8.5.0",
            "driver": ">=25.0.rc1",
            "firmware": ">=7.7.0.1.231",
            "torch": ">=2.7, <2.9",
            "torch_npu": "~=2.8",
            "python": ">=3.9",
            "nnal": "==8.5.*",
            "socs": ["ascend910b", "ascend910_93"],
            "soc": {"ascend910_93": {"cann": ">=9.0.0"}},
            "vendors": {"customize": {"op_types": ["AddCustom"]}},
        }
    },
}


def write(tmp_path: Path, data: dict, name: str = "pyproject.toml") -> Path:
    file = tmp_path / name
    file.write_text(tomli_w.dumps(data))
    return file


def load(file: Path) -> constraints.Constraints:
    return constraints.load(file, file.name)


def test_a_valid_pyproject_loads_every_item(tmp_path):
    declared = load(write(tmp_path, VALID))
    assert declared.who == "fla-npu"
    assert declared.guard_ranges() == {
        k: v for k, v in VALID["tool"]["ascenv"].items() if isinstance(v, str)
    }  # the SoC-conditional range is not in the guard
    assert [(r.layer, r.spec, r.soc) for r in declared.ranges if r.soc] == [("cann", ">=9.0.0", "ascend910_93")]
    assert declared.ranges[0].where == "pyproject.toml: tool.ascenv.driver"
    assert declared.socs == ("ascend910b", "ascend910_93")
    assert declared.vendors == (
        constraints.VendorNeed("customize", ("AddCustom",), "pyproject.toml: tool.ascenv.vendors.customize"),
    )


def test_ascenv_toml_has_the_keys_at_the_top_and_wins_over_pyproject(tmp_path):
    write(tmp_path, VALID)
    write(tmp_path, {"cann": ">=8.3.RC1", "vendors": ["customize"]}, "ascenv.toml")
    file = constraints.find(tmp_path)
    assert file.name == "ascenv.toml"
    declared = load(file)
    assert declared.who == tmp_path.name  # no [project].name there: the directory names it
    assert declared.ranges[0].where == "ascenv.toml: cann"
    assert [v.name for v in declared.vendors] == ["customize"]


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"pyproject.toml": {"project": {"name": "x"}}},
        {"pyproject.toml": {"tool": {"ruff": {}}}},
        {"pyproject.toml": {"tool": "ascenv"}},
    ],
    ids=["empty", "no-tool", "other-tool", "tool-not-a-table"],
)
def test_a_directory_without_constraints_is_a_usage_error(tmp_path, files):
    for name, data in files.items():
        write(tmp_path, data, name)
    with pytest.raises(UsageError, match=r"no ascenv.toml, and no \[tool.ascenv\] table"):
        constraints.find(tmp_path)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"cann": 8.5}, r"tool.ascenv.cann: expected string, found float 8.5"),
        ({"cann": ">=8.5.zz"}, r"tool.ascenv.cann: not a cann version: '8.5.zz'"),
        ({"cann": "8.5.0"}, r"tool.ascenv.cann: '8.5.0' is not <operator><version>"),
        ({"cann": "~=8.5"}, r"tool.ascenv.cann: ~=8.5: ~= needs at least X.Y.Z"),
        ({"cann": ">=8.5.*"}, r"tool.ascenv.cann: >=8.5.\*: a .\* family goes with == or != only"),
        ({"driver": ">=25.0.rc1, <"}, r"tool.ascenv.driver: '<' is not <operator><version>"),
        ({"torch_npu": ">=2.8.0-cpu-build"}, r"tool.ascenv.torch_npu: >=2.8.0-cpu-build: not a PEP 440 specifier"),
        ({"torch": "===2.8.0"}, r"tool.ascenv.torch: ===2.8.0: not a PEP 440 specifier"),
        ({"python": "~=3"}, r"tool.ascenv.python: ~=3: not a PEP 440 specifier"),
        ({"torchnpu": "~=2.8"}, r"tool.ascenv.torchnpu: unknown key; perhaps you meant 'torch_npu'\?"),
        ({"socs": ["Ascend910B"]}, r"tool.ascenv.socs\[0\]: expected a compute unit"),
        ({"socs": "ascend910b"}, r"tool.ascenv.socs: expected list, found string"),
        ({"soc": {"ascend910_93": {"cann": ">=9.0", "toch": "x"}}}, r"tool.ascenv.soc.ascend910_93.toch: unknown key"),
        ({"soc": {"910b": {"cann": ">=9.0.0"}}}, r"tool.ascenv.soc.910b: expected a compute unit"),
        ({"vendors": {"customize": {"op_type": ["X"]}}}, r"tool.ascenv.vendors.customize.op_type: unknown key"),
        ({"vendors": {"customize": {"op_types": [""]}}}, r"tool.ascenv.vendors.customize.op_types\[0\]"),
        ({"vendors": "customize"}, r"tool.ascenv.vendors: expected table, found string"),
    ],
)
def test_an_invalid_item_names_its_key_path(tmp_path, change, message):
    data = copy.deepcopy(VALID)
    data["tool"]["ascenv"].update(change)
    with pytest.raises(DataFileError, match="^pyproject.toml: " + message):
        load(write(tmp_path, data))


def test_a_wrong_value_at_any_key_path_is_refused_with_that_path(tmp_path):
    """A table where a string (or a list) is expected anywhere: the message names the place."""
    table = VALID["tool"]["ascenv"]
    for path in key_paths(table):
        data = copy.deepcopy(VALID)
        parent = data["tool"]["ascenv"]
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = {"wrong": True} if not isinstance(parent[path[-1]], dict) else 7
        with pytest.raises(DataFileError) as raised:
            load(write(tmp_path, data))
        shown = "tool.ascenv" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path[:-1])
        assert raised.value.message.startswith(f"pyproject.toml: {shown}"), (path, raised.value.message)


@pytest.mark.parametrize("text", ["[tool.ascenv]\n", "[tool.ascenv", b"\xff = 1"], ids=["empty", "toml", "utf8"])
def test_a_file_that_declares_nothing_or_is_no_toml_is_refused(tmp_path, text):
    file = tmp_path / "pyproject.toml"
    file.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(DataFileError, match=r"^pyproject.toml: (tool.ascenv: declares nothing|not valid TOML)"):
        load(file)


# --- verdicts on the fixture machines ---------------------------------------------------------------


def snapshot(name, tmp_path):
    host = build_host(name, tmp_path)
    return collect(Root(str(host.root)), host.environ, python=sys.executable)


def verdicts(name, tmp_path, table):
    file = write(tmp_path, {"project": {"name": "proj"}, "tool": {"ascenv": table}})
    found = constraints.judge(snapshot(name, tmp_path), load(file), shipped_matrix())
    return {(f.id, f.severity) for f in found}, found


def test_the_vllm_ascend_image_misses_cann_85_and_keeps_torch_npu_28(tmp_path):
    seen, found = verdicts("vllm-ascend-v0.12.0rc1", tmp_path, {"cann": ">=8.5.0", "torch_npu": "~=2.8"})
    assert seen == {("ASC-REQ-CANN", Severity.ERROR), ("ASC-REQ-TORCH_NPU", Severity.OK)}
    cann = next(f for f in found if f.id == "ASC-REQ-CANN")
    assert cann.title == "proj needs CANN >=8.5.0, found 8.3.RC2"
    assert cann.layer == "cann" and cann.source == "pyproject.toml: tool.ascenv.cann"
    assert cann.evidence == ("/usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux/ascend_toolkit_install.info",)
    assert cann.fix == "install CANN >=8.5.0 and source its set_env.sh"


def test_the_older_image_misses_torch_npu_28_and_torch(tmp_path):
    seen, found = verdicts("vllm-ascend-v0.11.0", tmp_path, {"torch_npu": "~=2.8", "torch": ">=2.8", "python": ">=3"})
    assert seen == {
        ("ASC-REQ-TORCH_NPU", Severity.ERROR),
        ("ASC-REQ-TORCH", Severity.ERROR),
        ("ASC-REQ-PYTHON", Severity.OK),
    }
    torch = next(f for f in found if f.id == "ASC-REQ-TORCH")
    assert torch.title == "proj needs torch >=2.8, found 2.7.1+cpu" and torch.fix == "pip install 'torch>=2.8'"


def test_an_a3_host_meets_cann_85_but_not_its_own_soc_override(tmp_path):
    table = {"cann": ">=8.5.0", "socs": ["ascend910_93"], "soc": {"ascend910_93": {"cann": ">=9.0.0"}}}
    seen, found = verdicts("a3-cann850", tmp_path, table)
    assert seen == {("ASC-REQ-CANN", Severity.OK), ("ASC-REQ-CANN", Severity.ERROR), ("ASC-REQ-SOC", Severity.OK)}
    override = next(f for f in found if f.severity is Severity.ERROR)
    assert override.expected == "CANN >=9.0.0 where an NPU of ascend910_93 is present"
    assert override.title == "proj needs CANN >=9.0.0 on ascend910_93, found 8.5.0"


def test_an_override_for_another_family_does_not_apply(tmp_path):
    seen, _ = verdicts("a2-cann800", tmp_path, {"soc": {"ascend910_93": {"cann": ">=9.0.0"}}, "socs": ["ascend910b"]})
    assert seen == {("ASC-REQ-SOC", Severity.OK)}


def test_an_unsupported_soc_and_a_missing_vendor_are_errors(tmp_path):
    seen, found = verdicts("310p-duo", tmp_path, {"socs": ["ascend910b"], "vendors": ["customize"]})
    assert seen == {("ASC-REQ-SOC", Severity.ERROR), ("ASC-REQ-VENDOR", Severity.ERROR)}
    soc = next(f for f in found if f.id == "ASC-REQ-SOC")
    assert soc.title == "proj supports ascend910b, found ascend310p"


def test_without_npu_socs_are_notes_and_missing_torch_and_nnal_are_errors(tmp_path):
    seen, found = verdicts("nonroot-home", tmp_path, {"socs": ["ascend910b"], "nnal": ">=8.5.0", "torch_npu": ">=2"})
    assert seen == {
        ("ASC-REQ-SOC", Severity.INFO),
        ("ASC-REQ-NNAL", Severity.ERROR),
        ("ASC-REQ-TORCH_NPU", Severity.ERROR),
    }
    assert next(f for f in found if f.id == "ASC-REQ-TORCH_NPU").title == "proj needs torch_npu >=2, found none"


@pytest.mark.parametrize(
    ("installed", "spec", "severity"),
    [("8.5.0", ">=8.5.0", Severity.OK), ("8.2.RC1", ">=8.5.0", Severity.ERROR), ("9.1.0", "==9.1.*", Severity.OK)],
)
def test_nnal_is_judged_from_its_version_info(tmp_path, installed, spec, severity):
    from dataclasses import replace

    from ascenv.model import StackPart

    info = f"/usr/local/Ascend/nnal/atb/{installed}/version.info"
    part = StackPart(name="nnal-atb", version=installed, path=f"/usr/local/Ascend/nnal/atb/{installed}", source=info)
    snap = replace(snapshot("a2-cann800", tmp_path), stack=(part,))
    file = write(tmp_path, {"project": {"name": "proj"}, "tool": {"ascenv": {"nnal": spec}}})
    (found,) = constraints.judge(snap, load(file), shipped_matrix())
    assert (found.id, found.severity) == ("ASC-REQ-NNAL", severity)
    assert found.evidence == (info,)


def test_driver_and_firmware_use_huawei_ordering(tmp_path):
    # a2-cann800: driver 25.0.rc1.1 (a patch above 25.0.rc1), firmware 7.7.0.1.231
    table = {"driver": ">=25.0.rc1, <25.0.0", "firmware": ">7.7.0.1.230"}
    seen, _ = verdicts("a2-cann800", tmp_path, table)
    assert seen == {("ASC-REQ-DRIVER", Severity.OK), ("ASC-REQ-FIRMWARE", Severity.OK)}
    (tmp_path / "2").mkdir()
    seen, _ = verdicts("a2-cann800", tmp_path / "2", {"driver": ">=25.0.0"})
    assert seen == {("ASC-REQ-DRIVER", Severity.ERROR)}


def test_every_constraint_finding_is_explained(tmp_path):
    table = {k: v for k, v in VALID["tool"]["ascenv"].items()}
    _, found = verdicts("a3-cann850", tmp_path, table)
    known = constraints.explained_ids()
    assert {f.id for f in found} <= set(known) and len(known) == len(guard.LAYERS) + 2
    for id in known:
        code, out, err = run_cli(["explain", id.lower()], {})
        assert code == 0 and out.startswith(f"{id}  ({known[id][0]})") and "[tool.ascenv]" in out, err


@pytest.mark.parametrize("value", ["cann >= 8.5", ["x"], 3])
def test_a_tool_ascenv_that_is_no_table_is_refused(tmp_path, value):
    file = write(tmp_path, {"tool": {"ascenv": value}})
    assert constraints.find(tmp_path) == file
    with pytest.raises(DataFileError, match=r"^pyproject.toml: tool.ascenv: expected a table of constraints, found"):
        load(file)


spec_text = st.one_of(
    st.text(max_size=12),
    st.builds(
        lambda op, v, more: f"{op}{v}{more}",
        st.sampled_from(["", "==", "!=", ">=", "<=", ">", "<", "~=", "===", "=>"]),
        st.sampled_from(["8.5.0", "8.3.RC1", "8.5", "2.8", "2.8.0rc1", "8.5.*", "8.5.X", "25.0.rc1.1", "9", "", "x"]),
        st.sampled_from(["", ", <9.0.0", ",", ".post1", "+cpu", " ", ".alpha001"]),
    ),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layer=st.sampled_from(guard.LAYERS), spec=spec_text)
def test_what_load_accepts_the_guard_can_judge(tmp_path, layer, spec):
    """A range accepted at load must never make the emitted guard raise ValueError at import."""
    file = tmp_path / "ascenv.toml"
    file.write_text(tomli_w.dumps({layer: spec}))
    try:
        declared = load(file)
    except DataFileError:
        return
    (accepted,) = declared.ranges
    for version in ("8.5.0", "2.8.1", "25.0.1"):  # readable in both numberings: any ValueError is the range's
        guard.contains(layer, accepted.spec, version)
