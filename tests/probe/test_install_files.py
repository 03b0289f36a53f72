"""The install-file parsers on every file of tests/data/corpus/version_files/ (values read by eye)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv.probe.install_files import (
    VersionPair,
    VersionRange,
    parse_colon_fields,
    parse_compatible_versions,
    parse_key_values,
    parse_requirement,
    parse_version_cfg,
)
from tests.conftest import CORPUS
from tests.fixture_hosts import corpus_sections, corpus_text

VERSION_FILES = CORPUS / "version_files"


def payload(name: str) -> str:
    return corpus_text(f"version_files/{name}")


def sections(name: str) -> list[str]:
    return corpus_sections(f"version_files/{name}")


# --- ascend_toolkit_install.info: (file, version, innerversion, arch, path, compatible count) ----

TOOLKIT_INFOS = [
    (
        "ascend_toolkit_install.info_7.0.RC1_aarch64_310B4-board_notes.txt",
        "7.0.RC1",
        "V100R001C13SPC005B246",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/7.0.RC1/aarch64-linux",
        5,
    ),
    (
        "ascend_toolkit_install.info_8.0.0_aarch64_container_vllm-ascend-issue632.txt",
        "8.0.0",
        "V100R001C20SPC001B251",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.0.0/aarch64-linux",
        5,
    ),
    (
        "ascend_toolkit_install.info_8.1.RC1_aarch64_910ProB_vllm-ascend-issue1047.txt",
        "8.1.RC1",
        "V100R001C21SPC001B238",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.1.RC1/aarch64-linux",
        5,
    ),
    (
        "ascend_toolkit_install.info_8.1.RC1_aarch64_vllm-ascend-issue1993.txt",
        "8.1.RC1",
        "V100R001C21SPC001B238",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.1.RC1/aarch64-linux",
        5,
    ),
    (
        "ascend_toolkit_install.info_8.1.RC1_x86_64_vllm-ascend-issue616.txt",
        "8.1.RC1",
        "V100R001C21B081",
        "x86_64",
        "/usr/local/Ascend/ascend-toolkit/8.1.RC1/x86_64-linux",
        5,
    ),
    (
        "ascend_toolkit_install.info_8.2.RC1_aarch64_910B4-1_vllm-ascend-issue3029.txt",
        "8.2.RC1",
        "V100R001C22SPC001B231",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.2.RC1/aarch64-linux",
        6,
    ),
    (
        "ascend_toolkit_install.info_8.3.RC1_aarch64_A3_vllm-ascend-issue3002.txt",
        "8.3.RC1",
        "V100R001C23B085",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.3.RC1/aarch64-linux",
        6,
    ),
    (
        "ascend_toolkit_install.info_8.3.RC2_aarch64_910B2_vllm-ascend-issue5648.txt",
        "8.3.RC2",
        "V100R001C23SPC002B210",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux",
        6,
    ),
    (
        "ascend_toolkit_install.info_8.3.RC2_aarch64_910B4-1_vllm-ascend-issue5606.txt",
        "8.3.RC2",
        "V100R001C23SPC002B210",
        "aarch64",
        "/usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux",
        6,
    ),
]


@pytest.mark.parametrize(("name", "version", "inner", "arch", "path", "n_compatible"), TOOLKIT_INFOS)
def test_toolkit_install_info(name, version, inner, arch, path, n_compatible):
    fields = parse_key_values(payload(name))
    assert fields["package_name"] == "Ascend-cann-toolkit"
    assert (fields["version"], fields["innerversion"], fields["arch"], fields["os"], fields["path"]) == (
        version,
        inner,
        arch,
        "linux",
        path,
    )
    ranges = parse_compatible_versions(fields["compatible_version"])
    assert len(ranges) == n_compatible
    assert ranges[0] == VersionRange("V100R001C29" if version == "7.0.RC1" else "V100R001C15")
    assert all(r.high is None for r in ranges)


def test_7_0_rc1_prompt_line_is_ignored():
    # the capture starts with "[HwHiAiUser@davinci-mini arm64-linux]$ cat ascend_toolkit_install.info"
    fields = parse_key_values(payload(TOOLKIT_INFOS[0][0]))
    assert list(fields) == ["package_name", "version", "innerversion", "compatible_version", "arch", "os", "path"]


def test_800ia2_notes_driver_firmware_toolkit_kernel_nnal_mindie():
    driver, firmware, toolkit, install, opp_kernel, atb, mindie = sections(
        "driver25.0.rc1.1_fw7.7.0.1.231_toolkit8.2.RC1_opp_kernel_nnal_mindie2.1.RC1_800IA2-notes.txt"
    )
    d = parse_key_values(driver)
    assert d["Version"] == "25.0.rc1.1"
    assert d["ascendhal_version"] == "7.35.23"
    assert d["Innerversion"] == "V100R001C21SPC002B220"
    assert d["package_version"] == "25.0.rc1.1"
    assert [r.low for r in parse_compatible_versions(d["compatible_version"])] == [
        "V100R001C17",
        "V100R001C18",
        "V100R001C19",
        "V100R001C20",
        "V100R001C21",
    ]
    assert parse_compatible_versions(d["compatible_version_fw"]) == (VersionRange("7.0.0", "7.7.99"),)

    f = parse_key_values(firmware)
    assert (f["Version"], f["firmware_version"], f["package_version"]) == ("7.7.0.1.231", "1.0", "25.0.rc1.1")
    assert parse_compatible_versions(f["compatible_version_drv"]) == (
        VersionRange("23.0.0", "23.0.0."),
        VersionRange("24.0", "24.0."),
        VersionRange("24.1", "24.1."),
        VersionRange("25.0", "25.0."),
    )
    assert parse_compatible_versions(f["compatible_version_drv"])[1].raw == "[24.0,24.0.]"

    t = parse_key_values(toolkit)
    assert (t["Version"], t["version_dir"], t["timestamp"]) == ("8.2.0.0.201", "8.2.RC1", "20250724_194044950")
    assert t["required_package_compiler_version"] == "8.2"  # quotes dropped
    assert parse_requirement(t["required_package_opp_kernel_version"]) == (">=7.6", "<=8.2")

    i = parse_key_values(install)
    assert (i["version"], i["innerversion"], i["path"]) == (
        "8.2.RC1",
        "V100R001C22SPC001B231",
        "/usr/local/Ascend/ascend-toolkit/8.2.RC1/aarch64-linux",
    )

    k = parse_key_values(opp_kernel)
    assert (k["Version"], k["ops_version"], k["adk_version"]) == ("8.2.0.0.201", "8.2.0.0.201", "8.2.0.0.201")
    assert k["required_package_runtime_version"] == ">=7.6, <=8.2"
    assert len([key for key in k if key.startswith("required_package_")]) == 10

    a = parse_colon_fields(atb)
    assert a == {
        "Ascend-cann-atb": "8.2.RC1",
        "Ascend-cann-atb Version": "8.2.RC1.B150",
        "Platform": "aarch64",
        "branch": "br_release_cann_8.2.RC1_20251226",
        "commit id": "f10dc20391d8af04c3f8024aca0e0dfa94d2a0a5",
    }
    m = parse_colon_fields(mindie)
    assert m["Ascend-mindie"] == "MindIE 2.1.RC1.B152"
    assert m["mindie-rt"] == "2.1.RC1.B152"
    assert m["mindie-sd"] == "2.1.RC1.B152"  # written "mindie-sd:2.1.RC1.B152"
    assert len(m) == 7


def test_etc_ascend_install_info_samples():
    a, b, c = (parse_key_values(s) for s in sections("etc_ascend_install.info_samples.txt"))
    assert list(a)[:3] == ["UserName", "UserGroup", "Firmware_Install_Type"]  # firmware installed first
    assert a["Driver_Install_Path_Param"] == "/usr/local/Ascend"
    assert a["Driver_Install_For_All"] == "yes"
    assert "Driver_Install_Mode" not in a and "Driver_Install_Status" not in a
    assert list(b)[2] == "Driver_Install_Type" and b["Driver_Install_Mode"] == "normal"
    assert "Driver_Install_Status" not in b
    assert c["Driver_Install_Status"] == "complete"
    assert c["Driver_Install_For_All"] == "no"
    assert len(a) == 7 and len(b) == 8 and len(c) == 9


def test_mindie_image_version_cfg_driver_atb_models_mindie_nnal():
    cfg, listing, driver, atb_models, mindie, nnal = sections(
        "mindie-2.0.T3.1-image_version.cfg_driver_atb_mindie_version.info_notes.txt"
    )
    parsed = parse_version_cfg(cfg)
    assert parsed.format_version == "1.0"
    assert len(parsed.entries) == 24
    assert parsed.get("opp_kernel", "installed") == (VersionPair("7.6.T13.0.B094", "8.0.T63"),)
    assert parsed.cann_versions == ("8.0.T63",)
    assert "opp ->" in listing  # the ll listing is not a version file; nothing to parse
    d = parse_key_values(driver)
    assert (d["Version"], d["Innerversion"]) == ("24.1.rc2.2", "V100R001C18SPC001B233")
    assert parse_compatible_versions(d["compatible_version_fw"]) == (VersionRange("7.0.0", "7.2.99"),)
    models = parse_colon_fields(atb_models)
    assert models["MindIE-ATB Version"] == ""
    assert models["ATB-Models Version"] == "2.0.T3.B010"
    assert models["Time"] == "2025-02-05 03:45:45 PM CST"
    assert parse_colon_fields(mindie)["mindie-llm"] == "2.0.T3.B010"
    assert parse_colon_fields(nnal)["Ascend-cann-atb Version"] == "8.0.T63.B020"


def test_set_env_sh_8_0_0_is_not_a_key_value_file():
    # every line is "export NAME=..."; "export NAME" is not a key, so nothing is taken from it
    assert parse_key_values(payload("set_env.sh_8.0.0_ascend-toolkit_rst-notes.txt")) == {}
    assert payload("set_env.sh_8.0.0_ascend-toolkit_rst-notes.txt").count("export ") == 10


def test_toolkit_7_0_0_install_info_and_opp_version():
    install, opp = sections("toolkit_7.0.0_install.info_and_opp_version.info_310B4_davinci-mini-log.txt")
    i = parse_key_values(install)
    assert (i["version"], i["innerversion"]) == ("7.0.0", "V100R001C15SPC003B226")
    assert len(parse_compatible_versions(i["compatible_version"])) == 6
    assert parse_key_values(opp) == {"Version": "7.1.0.3.220", "version_dir": "7.0.0"}


def test_version_cfg_6_0_1_without_header():
    cfg = parse_version_cfg(payload("version.cfg_6.0.1_old-1.84-inner-format_310P3_Ascend-samples-issue11.txt"))
    assert cfg.format_version is None
    assert len(cfg.entries) == 18
    assert {e.component for e in cfg.entries} == {"runtime", "compiler", "opp", "toolkit", "aoe", "ncs"}
    assert cfg.get("runtime") == (VersionPair("1.84.15.1.310", "6.0.1"),)
    assert cfg.get("hccl") == ()


def test_version_cfg_8_0_0_with_header():
    cfg = parse_version_cfg(payload("version.cfg_8.0.0_ascend-toolkit-latest_rst-notes.txt"))
    assert cfg.format_version == "1.0"
    assert len(cfg.entries) == 21
    assert cfg.get("compiler", "upgrade") == (VersionPair("7.6.0.1.220", "8.0.0"),)
    assert cfg.get("hccl", "installed") == (VersionPair("7.6.0.1.220", "8.0.0"),)


def test_every_version_file_is_covered():
    covered = {t[0] for t in TOOLKIT_INFOS} | {
        "driver25.0.rc1.1_fw7.7.0.1.231_toolkit8.2.RC1_opp_kernel_nnal_mindie2.1.RC1_800IA2-notes.txt",
        "etc_ascend_install.info_samples.txt",
        "mindie-2.0.T3.1-image_version.cfg_driver_atb_mindie_version.info_notes.txt",
        "set_env.sh_8.0.0_ascend-toolkit_rst-notes.txt",
        "toolkit_7.0.0_install.info_and_opp_version.info_310B4_davinci-mini-log.txt",
        "version.cfg_6.0.1_old-1.84-inner-format_310P3_Ascend-samples-issue11.txt",
        "version.cfg_8.0.0_ascend-toolkit-latest_rst-notes.txt",
    }
    assert covered == {p.name for p in VERSION_FILES.iterdir()}


# --- shapes not in the captured files -----------------------------------------------------------


def test_installed_version_with_several_pairs():
    # installed_version can hold several pairs
    cfg = parse_version_cfg("opp_kernel_installed_version=[7.5.T11.0.B081:8.0.RC3.alpha003][8.2.0.2.220:8.2.RC2]\n")
    assert cfg.get("opp_kernel", "installed") == (
        VersionPair("7.5.T11.0.B081", "8.0.RC3.alpha003"),
        VersionPair("8.2.0.2.220", "8.2.RC2"),
    )
    assert cfg.cann_versions == ("8.0.RC3.alpha003", "8.2.RC2")


def test_nnae_style_range_lists():
    # nnae install.info writes [V100R001C13,V100R001C19],[V100R001C30] (github:Ascend/mind-cluster@
    # 22bb3d987bc0208c3eb7395e222b661276133c58:component/ascend-faultdiag/test/st_testcase/
    # modelarts-job-testdt/ascend/environment_check/worker-0/npu_info_before.txt)
    assert parse_compatible_versions("[V100R001C13,V100R001C19],[V100R001C30]") == (
        VersionRange("V100R001C13", "V100R001C19"),
        VersionRange("V100R001C30"),
    )
    assert parse_compatible_versions("") == ()
    assert parse_compatible_versions("[],[a,b,c],[x,]") == ()


@given(st.text())
def test_parsers_never_raise(text):
    parse_key_values(text)
    parse_colon_fields(text)
    parse_compatible_versions(text)
    parse_version_cfg(text)
    parse_requirement(text)


# --- a secret PEM block in an install file never becomes fields (issue 28) ----------------------

KEY_BODY = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "bm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW==", "QUJD=="]


def _with_key(before: str, label: str, newline: str = "\n", headers: str = "") -> str:
    block = [f"-----BEGIN {label}-----", *([headers] if headers else []), *KEY_BODY, f"-----END {label}-----"]
    return before + newline.join(block) + newline + "arch=aarch64" + newline


@pytest.mark.parametrize(
    "text",
    [
        _with_key("Version=25.0.rc1.1\n", "RSA PRIVATE KEY"),
        _with_key("Version=25.0.rc1.1\r\n", "PRIVATE KEY", newline="\r\n"),
        _with_key("Version=25.0.rc1.1\n", "EC PRIVATE KEY", headers="Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,8E"),
        _with_key("Version=25.0.rc1.1\n", "OPENSSH PRIVATE KEY").replace("-----END OPENSSH PRIVATE KEY-----\n", ""),
    ],
)
def test_no_line_of_a_private_key_becomes_a_field(text):
    fields = {**parse_key_values(text), **parse_colon_fields(text)}
    recorded = " ".join([*fields, *fields.values()])
    assert fields.get("Version") == "25.0.rc1.1"
    assert not any(line.rstrip("=") in recorded for line in KEY_BODY)
    assert "ENCRYPTED" not in recorded and "BEGIN" not in recorded
    cfg = parse_version_cfg(text.replace("Version=25.0.rc1.1", "runtime_running_version=[7.6:8.0]"))
    assert [e.component for e in cfg.entries] == ["runtime"]


def test_a_certificate_in_an_install_file_is_left_to_the_parser():
    text = "Version=1\n-----BEGIN CERTIFICATE-----\nMIIB=x\n-----END CERTIFICATE-----\n"
    assert parse_key_values(text) == {"Version": "1", "MIIB": "x"}
