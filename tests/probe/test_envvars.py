from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ascenv.probe.envvars import is_ascend_variable, probe_env, redact
from ascenv.probe.fs import Root
from tests.conftest import CORPUS, load_capture

SET_ENV = CORPUS / "version_files" / "set_env.sh_8.0.0_ascend-toolkit_rst-notes.txt"
TOOLKIT = "/usr/local/Ascend/ascend-toolkit"


@pytest.fixture
def machine(tmp_path: Path) -> Root:
    """Two toolkits, 8.0.0 (what ``latest`` points at) and 8.2.RC1, and a driver."""
    top = tmp_path / "root"
    for version in ("8.0.0", "8.2.RC1"):
        for sub in ("lib64/plugin/opskernel", "lib64/plugin/nnengine", "bin", "opp", "python/site-packages"):
            (top / TOOLKIT.lstrip("/") / version / sub).mkdir(parents=True)
    (top / TOOLKIT.lstrip("/") / "latest").symlink_to("8.0.0")
    for sub in ("common", "driver"):
        (top / "usr/local/Ascend/driver/lib64" / sub).mkdir(parents=True)
    return Root(top)


def _sourced(variable: str, times: int, tmp_path: Path) -> str:
    """The value ``variable`` has after sourcing the recorded CANN 8.0.0 set_env.sh ``times`` times
    in a clean shell (the script is plain exports; sourcing it twice is a common mistake)."""
    script = tmp_path / "set_env.sh"
    script.write_text(load_capture(SET_ENV))
    command = "; ".join([f". {script}"] * times) + f'; printf %s "${variable}"'
    env = {"PATH": "/usr/bin:/bin"}
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, check=True).stdout


def test_set_env_ld_library_path_entries(machine, tmp_path):
    value = _sourced("LD_LIBRARY_PATH", 1, tmp_path)
    info = probe_env({"LD_LIBRARY_PATH": value}, machine, [f"{TOOLKIT}/8.0.0", f"{TOOLKIT}/8.2.RC1"])
    entries = info.paths["LD_LIBRARY_PATH"]
    latest = f"{TOOLKIT}/latest"
    arch = os.uname().machine
    assert [e.value for e in entries] == [
        f"{latest}/tools/aml/lib64",
        f"{latest}/tools/aml/lib64/plugin",
        f"{latest}/lib64",
        f"{latest}/lib64/plugin/opskernel",
        f"{latest}/lib64/plugin/nnengine",
        f"{latest}/opp/built-in/op_impl/ai_core/tbe/op_tiling/lib/linux/{arch}",
        "/usr/local/Ascend/driver/lib64",
        "/usr/local/Ascend/driver/lib64/common",
        "/usr/local/Ascend/driver/lib64/driver",
        "",  # LD_LIBRARY_PATH was empty: set_env.sh leaves a trailing ':' (the current directory)
    ]
    assert [e.exists for e in entries] == [False, False, True, True, True, False, True, True, True, None]
    # every toolkit entry goes through `latest` into 8.0.0, even those missing from this install
    assert [e.cann_path for e in entries] == [f"{TOOLKIT}/8.0.0"] * 6 + [None] * 4
    assert not any(e.duplicate for e in entries)


def test_sourcing_twice_marks_duplicates(machine, tmp_path):
    value = _sourced("PATH", 2, tmp_path)
    entries = probe_env({"PATH": value}, machine, [f"{TOOLKIT}/8.0.0"]).paths["PATH"]
    assert len(entries) == 8  # 3 CANN bin dirs twice, then /usr/bin and /bin
    assert [e.duplicate for e in entries] == [False, False, False, True, True, True, False, False]
    assert entries[0].value == f"{TOOLKIT}/latest/bin" and entries[0].exists is True


def test_entries_into_two_cann_versions_and_two_spellings_of_one_dir(machine):
    value = f"{TOOLKIT}/latest/lib64:{TOOLKIT}/8.2.RC1/lib64:{TOOLKIT}/8.0.0/lib64/::relative/dir"
    info = probe_env({"LD_LIBRARY_PATH": value}, machine, [f"{TOOLKIT}/8.0.0", f"{TOOLKIT}/8.2.RC1"])
    entries = info.paths["LD_LIBRARY_PATH"]
    assert [e.cann_path for e in entries] == [f"{TOOLKIT}/8.0.0", f"{TOOLKIT}/8.2.RC1", f"{TOOLKIT}/8.0.0", None, None]
    assert [e.duplicate for e in entries] == [False, False, True, False, False]
    assert [e.exists for e in entries] == [True, True, True, None, None]


def test_custom_opp_path_trailing_colon_kept(machine):
    value = "/opt/vendors/customize:"  # what `source .../bin/set_env.bash` gives on an empty variable
    info = probe_env({"ASCEND_CUSTOM_OPP_PATH": value}, machine, [])
    assert [(e.value, e.exists) for e in info.paths["ASCEND_CUSTOM_OPP_PATH"]] == [
        ("/opt/vendors/customize", False),
        ("", None),
    ]
    assert info.variables["ASCEND_CUSTOM_OPP_PATH"] == value


def test_unset_and_empty_variables(machine):
    info = probe_env({"PYTHONPATH": ""}, machine, [])
    assert info.paths == {"PYTHONPATH": ()}


def test_variables_selected_and_secrets_dropped(machine):
    environ = {
        "ASCEND_HOME_PATH": f"{TOOLKIT}/latest",
        "ASCEND_RT_VISIBLE_DEVICES": "0,1",
        "ACL_OP_COMPILER_CACHE_MODE": "disable",
        "ACL_OP_COMPILER_CACHE_DIR": "/data/cache",
        "TOOLCHAIN_HOME": f"{TOOLKIT}/latest/toolkit",
        "ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0",
        "ASCEND_API_TOKEN": "s3cr3t",
        "ASCEND_PIP_INDEX": "https://user:pa55@mirror.example/simple",
        "HOME": "/root",
        "CUDA_HOME": "/usr/local/cuda",
        "LD_LIBRARY_PATH": "/x",
    }
    info = probe_env(environ, machine, [])
    assert info.variables == {
        "ACL_OP_COMPILER_CACHE_DIR": "/data/cache",
        "ACL_OP_COMPILER_CACHE_MODE": "disable",
        "ASCEND_HOME_PATH": f"{TOOLKIT}/latest",
        "ASCEND_PIP_INDEX": "https://***@mirror.example/simple",
        "ASCEND_RT_VISIBLE_DEVICES": "0,1",
        "ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0",
        "TOOLCHAIN_HOME": f"{TOOLKIT}/latest/toolkit",
    }


@pytest.mark.parametrize(
    "name, kept",
    [("ASCEND_CUSTOM_OPP_PATH", True), ("ASCEND_ACCESS_KEY", False), ("ACL_PASSWORD", False), ("PYTHONPATH", False)],
)
def test_is_ascend_variable(name, kept):
    assert is_ascend_variable(name) is kept


def test_redact_leaves_plain_paths_alone():
    assert redact("/usr/local/Ascend:/opt") == "/usr/local/Ascend:/opt"


@pytest.mark.parametrize(
    "name", ["ASCEND_PASS", "ASCEND_PWD", "ASCEND_PASSWD", "ASCEND_SIGNING", "ACL_SECRET", "ASCEND_KEY", "ATB_AUTH"]
)
def test_variables_named_like_credentials_are_never_recorded(machine, name):
    info = probe_env({name: "PlainPass123456", "ASCEND_HOME_PATH": TOOLKIT}, machine, [])
    assert info.variables == {"ASCEND_HOME_PATH": TOOLKIT}


@pytest.mark.parametrize(
    "value, recorded",
    [
        ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "***"),
        ("pypi-AgEIcHlwaS5vcmcCJGI1ZDJmYzQ3LWJh", "***"),
        ("https://u:Pa@ssw0rdSecret99@mirror.example.invalid/simple", "https://***@mirror.example.invalid/simple"),
        ("https://u:ab/cdSecret99@mirror.example.invalid/simple", "https://***@mirror.example.invalid/simple"),
        ("--user builder --password Sup3rS3cret", "--user builder --password ***"),
        ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/ascend-toolkit/latest"),
    ],
)
def test_secrets_in_recorded_values_are_masked(machine, value, recorded):
    info = probe_env({"ASCEND_MIRROR": value}, machine, [])
    assert info.variables == {"ASCEND_MIRROR": recorded}
