"""`ascenv doctor` end to end on the fixture machines: findings, exit codes, formats."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.cli_helpers import run_cli
from tests.conftest import SHARED
from tests.fixture_hosts import build_host, fake_site


def doctor_json(name, tmp_path, *extra):
    host = build_host(name, tmp_path)
    environ = dict(host.environ, HOME=host.home or "/root")
    code, out, err = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json", *extra], environ
    )
    return code, json.loads(out)


def ids(report, severity):
    return sorted({f["id"] for f in report["findings"] if f["severity"] == severity})


def test_a2_server_has_no_error(tmp_path):
    code, report = doctor_json("a2-cann800", tmp_path)
    assert ids(report, "error") == []
    assert code == 0 and report["exit_code"] == 0 and report["schema"] == 1
    assert report["snapshot"]["npu"]["driver_version"] == "25.0.rc1.1"


def test_dangling_latest_and_unsourced_env_fail(tmp_path):
    code, report = doctor_json("two-canns-dangling-latest", tmp_path)
    assert {"ASC-CANN-LINK", "ASC-ENV-SOURCED"} <= set(ids(report, "error"))
    assert code == 1
    fix = next(f["fix"] for f in report["findings"] if f["id"] == "ASC-ENV-SOURCED")
    # ascend-toolkit/set_env.sh exports ASCEND_TOOLKIT_HOME=.../latest, and latest dangles: the
    # fix must relink it to the newest install (8.2.RC1) before sourcing.
    toolkit = "/usr/local/Ascend/ascend-toolkit"
    assert fix == f"ln -sfn {toolkit}/8.2.RC1 {toolkit}/latest && source {toolkit}/set_env.sh"


def test_container_without_devices_names_the_device_flags(tmp_path):
    code, report = doctor_json("container-no-devices", tmp_path)
    assert code == 1
    nodes = next(f for f in report["findings"] if f["id"] == "ASC-DEV-NODES")
    assert "--device /dev/davinci_manager" in nodes["fix"]
    smi = next(f for f in report["findings"] if f["id"] == "ASC-NPU-SMI")
    assert "-8020" in smi["title"]


def test_cpu_dev_box_is_fine_without_npu(tmp_path):
    code, report = doctor_json("nonroot-home", tmp_path)
    assert "ASC-NPU-SMI" in ids(report, "info")
    assert code == 0


def test_strict_fails_on_warnings(tmp_path):
    code, report = doctor_json("a2-cann800", tmp_path, "--strict")
    assert code == (1 if ids(report, "warn") else 0)


def test_saved_snapshot_rechecks_offline_with_same_findings(tmp_path):
    host = build_host("two-canns-dangling-latest", tmp_path)
    environ = dict(host.environ, HOME="/root")
    saved = tmp_path / "snap.json"
    code, _, _ = run_cli(
        ["snapshot", "--root", str(host.root), "--python", sys.executable, "-o", str(saved), "--format", "json"],
        environ,
    )
    assert code == 0
    live_code, live = doctor_json("two-canns-dangling-latest", tmp_path / "again")
    code, out, _ = run_cli(["doctor", "--from", str(saved), "--format", "json"], {})
    offline = json.loads(out)
    assert code == live_code == 1
    assert [(f["id"], f["severity"]) for f in offline["findings"]] == [
        (f["id"], f["severity"]) for f in live["findings"]
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read snapshot"),
        ("{not json", "is not a JSON snapshot"),
        ('{"schema": 1, "npu": {"chips": [{"npu": "zero"}]}}', "npu.chips[0].npu: expected integer"),
        ('{"schema": 7}', "schema 7 is not supported"),
        ("{}", "not an ascenv snapshot"),
    ],
)
def test_bad_snapshot_is_a_clear_error_exit_2(tmp_path, content, message):
    path = tmp_path / "snap.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run_cli(["doctor", "--from", str(path)], {})
    assert code == 2 and message in err and "Traceback" not in err


def test_human_and_markdown_reports(tmp_path):
    host = build_host("two-canns-dangling-latest", tmp_path)
    environ = dict(host.environ, HOME="/root")
    code, out, _ = run_cli(["doctor", "--root", str(host.root), "--python", sys.executable], environ)
    assert code == 1 and "fix:" in out and " error" in out and "ASC-CANN-LINK" in out
    code, out, _ = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "markdown"], environ
    )
    assert out.startswith("### ascenv doctor") and "| ❌ | cann |" in out


# --- compatibility checks end to end (ascenv.checks.firmware/driver/cann/kernels/torch_npu/vendors) ----------------


def doctor_with(name, tmp_path, packages=None, prepare=None):
    host = build_host(name, tmp_path)
    if prepare:
        prepare(host.root)
    environ = dict(host.environ, HOME=host.home or "/root")
    if packages:
        environ["PYTHONPATH"] = fake_site(tmp_path, packages) + ":" + environ.get("PYTHONPATH", "")
    code, out, err = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"], environ
    )
    report = json.loads(out)
    return code, {(f["id"], f["severity"]): f for f in report["findings"]}


def test_a2_cann800_driver_newer_than_matched_and_validated_torch_npu(tmp_path):
    # CANN 8.0.0 shipped with HDK 24.1.0; the host runs 25.0.rc1.1: no list says yes or no (info).
    code, found = doctor_with("a2-cann800", tmp_path, {"torch": "2.1.0+cpu", "torch_npu": "2.1.0.post10"})
    assert code == 0
    assert found[("ASC-CANN-DRIVER", "info")]["title"] == "CANN 8.0.0 with driver 25.0.rc1.1: newer than matched"
    assert "[7.0.0,7.7.99]" in found[("ASC-FW-DRIVER", "ok")]["found"]
    assert (
        ("ASC-KERNELS-SOC", "ok") in found and ("ASC-TORCH-CANN", "ok") in found and ("ASC-TORCH-PAIR", "ok") in found
    )
    assert found[("ASC-KERNELS-TARGET", "info")]["fix"] == "atc ... --soc_version=Ascend910B4"
    assert "matched: 8.1.RC1" in found[("ASC-DRIVER-CANN", "info")]["found"]
    assert not any(key[0] == "ASC-DRIVER-REBOOT" for key in found)


def test_two_canns_one_without_kernels(tmp_path):
    code, found = doctor_with("two-canns-dangling-latest", tmp_path)
    assert code == 1
    missing = found[("ASC-KERNELS-SOC", "error")]
    assert missing["title"] == "CANN 8.1.RC1 has no kernels for ascend910b"
    assert missing["fix"] == "./Ascend-cann-kernels-910b_8.1.RC1_linux-aarch64.run --install"
    assert found[("ASC-KERNELS-SOC", "ok")]["title"] == "CANN 8.2.RC1 has kernels for ascend910b"


def test_a3_cann850_with_a_torch_npu_of_the_8_0_line(tmp_path):
    code, found = doctor_with("a3-cann850", tmp_path, {"torch": "2.1.0+cpu", "torch_npu": "2.1.0.post10"})
    assert code == 0  # no table pairs PTA 6.0.0 with CANN 8.5.0, none says N: not documented (issue #22)
    assert found[("ASC-CANN-DRIVER", "ok")]["title"] == "CANN 8.5.0 with driver 25.2.0: compatible"
    assert (
        found[("ASC-KERNELS-SOC", "ok")]["title"] == "CANN 8.5.0 has kernels for ascend910_93"
    )  # unit from PCI 0xd803
    assert "unknown" in found[("ASC-KERNELS-TARGET", "info")]["title"]  # A3 needs npu-smi board info
    unknown = found[("ASC-TORCH-CANN", "info")]
    assert unknown["title"] == "torch_npu 2.1.0.post10 with CANN 8.5.0: unknown" and unknown["fix"] == ""
    assert "no published table pairs torch_npu 2.1.0.post10 with CANN 8.5.0" in unknown["found"]
    assert found[("ASC-TORCH-SUGGEST", "info")]["fix"].startswith("pip install torch==")


@pytest.mark.skipif(not (SHARED / "opproject-refdata").is_dir(), reason="../shared/opproject-refdata is not available")
def test_310p_vendor_built_by_a_newer_cann_and_for_another_chip(tmp_path):
    refdata = SHARED / "opproject-refdata"
    toolkit = "usr/local/Ascend/ascend-toolkit/8.1.RC1"

    def install_vendor(root):
        # the real CANN 8.1.RC1 compiler/version.info (required_opp_abi_version=">=6.3, <=7.7"),
        # and a vendor as gen_version_info.sh writes it when built with CANN 8.2.RC1's compiler
        # (8.2.0.0.201: 800IA2 capture, toolkit/version.info of 8.2.RC1), kernels for ascend910b
        payload = (refdata / "cann-8.1.RC1_compiler_version.info").read_text().split("\n", 1)[1]
        (root / toolkit / "compiler").mkdir(parents=True)
        (root / toolkit / "compiler" / "version.info").write_text(payload)
        vendors = root / toolkit / "opp" / "vendors"
        (vendors / "customize" / "op_impl/ai_core/tbe/kernel/ascend910b").mkdir(parents=True)
        (vendors / "config.ini").write_text((refdata / "config.ini.single_vendor").read_text().split("\n", 1)[1])
        (vendors / "customize" / "version.info").write_text("custom_opp_compiler_version=8.2.0.0.201")

    code, found = doctor_with("310p-duo", tmp_path, prepare=install_vendor)
    assert code == 1
    skipped = found[("ASC-VENDOR-ABI", "error")]
    assert "8.2.0.0.201 (CANN 8.2.RC1)" in skipped["found"] and ">=6.3, <=7.7" in skipped["found"]
    assert found[("ASC-VENDOR-UNITS", "error")]["title"] == "vendor customize has no kernels for ascend310p"


@pytest.mark.parametrize("command", ["doctor", "snapshot"])
def test_root_that_is_no_directory_is_a_usage_error(command, tmp_path):
    # a typo must not audit an empty tree as a machine without NPU or CANN
    (tmp_path / "file").write_text("")
    for root, why in ((tmp_path / "missing", "does not exist"), (tmp_path / "file", "is not a directory")):
        code, out, err = run_cli([command, "--root", str(root), "--python", sys.executable], {})
        assert code == 2 and out == ""
        assert f"--root {root} {why}" in err and "Traceback" not in err


def test_root_and_from_are_relative_to_the_command_cwd(tmp_path):
    host = build_host("two-canns-dangling-latest", tmp_path)
    environ = dict(host.environ, HOME="/root")

    def run_in(cwd, argv):
        return run_cli(argv, environ, cwd)[:2]

    code, _ = run_in(
        host.root.parent,
        ["snapshot", "--root", host.root.name, "--python", sys.executable, "-o", "snap.json", "--format", "json"],
    )
    assert code == 0
    code, out = run_in(host.root.parent, ["doctor", "--from", "snap.json", "--format", "json"])
    assert code == 1 and json.loads(out)["snapshot"]["root"] == str(host.root)


def test_snapshot_to_an_unwritable_place_is_a_usage_error(tmp_path):
    host = build_host("nonroot-home", tmp_path)
    for target, why in ((tmp_path / "no" / "snap.json", "No such file or directory"), (tmp_path, "Is a directory")):
        code, out, err = run_cli(
            ["snapshot", "--root", str(host.root), "--python", sys.executable, "-o", str(target)], host.environ
        )
        assert code == 2 and f"cannot write {target}: {why}" in err


# --- the stacks of vllm-ascend's release images (ascenv.compat grading) ----------------------------


@pytest.mark.parametrize(
    ("name", "torch_npu"),
    [("vllm-ascend-v0.12.0rc1", "2.8.0"), ("vllm-ascend-v0.11.0", "2.7.1")],
)
def test_vllm_ascend_release_image_stacks_pass(tmp_path, name, torch_npu):
    # CANN 8.3.RC2 with PTA 7.2.0 is a published pairing (MindIE 2.2.RC1 bundle), shipped by
    # vllm-ascend v0.11.0 … v0.13.0rc1: no error, exit 0 (it was "outside" with "use CANN 8.3.RC1").
    code, report = doctor_json(name, tmp_path)
    assert ids(report, "error") == [] and code == 0
    found = {(f["id"], f["severity"]): f for f in report["findings"]}
    fit = found[("ASC-TORCH-CANN", "ok")]  # documented compatible (issue #22: a published pairing is ok)
    assert fit["title"] == f"torch_npu {torch_npu} with CANN 8.3.RC2: window"
    assert fit["source"] == "https://gitcode.com/Ascend/release-management/blob/master/MindIE/26.0.0/release.md"
    assert fit["data_as_of"] == "2026-12-01"
    assert ("ASC-TORCH-PAIR", "ok") in found  # torch X+cpu satisfies the x86_64 pin
    driver = found[("ASC-CANN-DRIVER", "info")]
    assert driver["found"] == (
        "no HDK compatibility published for CANN 8.3.RC2 in the data (as of 2026-12-01); driver 25.2.2 not judged"
    )


# --- an untrusted or locked-down root: never a hang, never "install it" for what is installed ----------


@pytest.mark.parametrize("kind", ["fifo", "socket", "directory"])
@pytest.mark.parametrize(
    "where", ["/etc/os-release", "/usr/local/Ascend/driver/version.info", "/etc/ascend_install.info"]
)
def test_a_special_file_under_root_does_not_hang_doctor(tmp_path, kind, where):
    from tests.probe.test_fs import plant
    from tests.test_fsutil import no_hang

    host = build_host("a2-cann800", tmp_path)
    (host.root / where.lstrip("/")).unlink(missing_ok=True)
    plant(host.root, where, kind)
    environ = dict(host.environ, HOME=host.home or "/root")
    argv = ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"]
    code, out, err = no_hang(lambda: run_cli(argv, environ), seconds=30)
    assert code in (0, 1), err
    report = json.loads(out)
    if where.endswith("version.info"):
        driver = next(f for f in report["findings"] if f["id"] == "ASC-DRIVER-LOADED")
        assert driver["title"] == "driver file is not a regular file" and "not a regular file" in driver["found"]


def test_unreadable_driver_and_cann_say_so_and_never_ask_to_install(tmp_path):
    from tests.probe.test_driver import without_read_override

    host = build_host("a2-cann800", tmp_path)
    locked = [host.root / "usr/local/Ascend/driver/version.info", host.root / "usr/local/Ascend/ascend-toolkit/8.0.0"]
    for path in locked:
        os.chmod(path, 0)
    code = "import sys\nfrom ascenv.cli import main\nsys.exit(main(sys.argv[1:]))"
    try:
        done = without_read_override(
            code, "doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"
        )
    finally:
        for path in locked:
            os.chmod(path, 0o755)
    report = json.loads(done.stdout)
    titles = {(f["id"], f["title"]): f for f in report["findings"]}
    driver = titles[("ASC-DRIVER-LOADED", "driver files cannot be read by this user")]
    cann = titles[("ASC-CANN-FOUND", "CANN files cannot be read by this user")]
    for finding in (driver, cann):
        assert finding["severity"] == "error" and finding["fix"].startswith(
            "rerun as root (sudo), or ask for read access"
        )
        assert "install" not in finding["fix"].replace("installs are", "")
    assert "/usr/local/Ascend/ascend-toolkit/8.0.0" in cann["found"] and "as uid" in driver["found"]
    assert not any("no driver installed" in t or "no CANN installation" in t for _, t in titles)


@pytest.mark.parametrize("command", [["doctor"], ["report", "-o", "r.tar.gz"]])
def test_from_names_the_file_as_given(tmp_path, command):
    (tmp_path / "bad.json").write_text('{"schema": 1, "host": {"arch": 7}}')
    (tmp_path / "ascenv.lock").write_text('# generated by ascenv lock\nlock-version = "1.0"\n')
    code, _, err = run_cli([*command, "--from", "missing.json"], {"SOURCE_DATE_EPOCH": "0"}, tmp_path)
    assert code == 2 and "error: cannot read snapshot missing.json: No such file or directory" in err
    assert str(tmp_path) not in err
    code, _, err = run_cli([*command, "--from", "bad.json"], {"SOURCE_DATE_EPOCH": "0"}, tmp_path)
    assert code == 2 and "error: bad.json: host.arch: expected string, found integer 7" in err
    code, _, err = run_cli([*command, "--from", "ascenv.lock"], {"SOURCE_DATE_EPOCH": "0"}, tmp_path)
    assert code == 2 and "ascenv.lock is not a JSON snapshot" in err and "looks like a lock" in err


def test_the_newest_vllm_ascend_release_image_passes_with_its_layer_documented(tmp_path):
    # vllm-ascend v0.23.0 (Dockerfile FROM cann:9.1.0-910b, its matrix row: vllm 0.23.0, torch_npu
    # 2.10.0.post4, triton-ascend 3.2.2) with NNAL 9.1.0: exit 0, no error (issue #22 item 5)
    code, report = doctor_json("vllm-ascend-v0.23.0", tmp_path)
    assert ids(report, "error") == [] and code == 0
    found = {(f["id"], f["severity"]): f for f in report["findings"]}
    assert found[("ASC-STACK-VLLM", "ok")]["title"] == "vllm-ascend 0.23.0 with CANN 9.1.0: documented"
    assert found[("ASC-STACK-NNAL", "ok")]["title"] == "NNAL 9.1.0 with CANN 9.1.0: one release"
    # triton-ascend 3.2.2 is newer than the installation guide's table; sglang's 950 image installs
    # it on CANN 9.1.0: known-good
    triton = found[("ASC-STACK-TRITON", "ok")]
    assert triton["title"] == "triton-ascend 3.2.2 with CANN 9.1.0: known-good (an official image installs both)"
    assert "sgl-project/sglang" in triton["source"]
    assert {p["name"]: p["version"] for p in report["snapshot"]["stack"]}["triton-ascend"] == "3.2.2"


@pytest.mark.parametrize(
    ("name", "stack"),
    [
        ("vllm-ascend-v0.23.0-a3", {"vllm-ascend": "0.23.0", "triton-ascend": "3.2.2", "nnal-atb": "9.1.0"}),
        ("sglang-npu-950", {"sglang": "0.5.10", "triton-ascend": "3.2.2", "nnal-atb": "9.1.0"}),
    ],
)
def test_the_newest_official_images_for_a3_and_the_950_pass(tmp_path, name, stack):
    # vllm-ascend v0.23.0's Dockerfile.a3 and sglang's npu-950.Dockerfile, both FROM the CANN 9.1.0
    # images: exit 0, no error, the layer above torch_npu recorded and judged ok
    code, report = doctor_json(name, tmp_path)
    assert ids(report, "error") == [] and code == 0
    recorded = {p["name"]: p["version"] for p in report["snapshot"]["stack"]}
    assert {k: recorded.get(k) for k in stack} == stack
    stack_findings = {(f["id"], f["severity"]) for f in report["findings"] if f["layer"] == "stack"}
    assert {s for _, s in stack_findings} == {"ok"} and ("ASC-STACK-NNAL", "ok") in stack_findings


_V0_25 = {"vllm-ascend": "0.25.1rc1", "vllm": "0.25.1"}


@pytest.mark.parametrize(
    ("name", "cann", "stack"),
    [
        # vllm-ascend v0.25.1rc1 (the newest tag of the stored repository) for A2, A3, the Atlas 350
        # and the 310P (no triton-ascend there), and sglang's A2/A3 image (docker/npu.Dockerfile)
        ("vllm-ascend-v0.25.1rc1", "9.0.1", {**_V0_25, "triton-ascend": "3.2.1", "nnal-atb": "9.0.1"}),
        ("vllm-ascend-v0.25.1rc1-a3", "9.0.1", {**_V0_25, "triton-ascend": "3.2.1", "nnal-atb": "9.0.1"}),
        ("vllm-ascend-v0.25.1rc1-a5", "9.0.1", {**_V0_25, "triton-ascend": "3.2.1", "nnal-atb": "9.0.1"}),
        ("vllm-ascend-v0.25.1rc1-310p", "9.1.0-beta.1", {**_V0_25, "triton-ascend": None, "nnal-atb": "9.1.0-beta.1"}),
        ("sglang-npu-a3", "8.5.0", {"sglang": "0.5.10", "triton-ascend": "3.2.1", "nnal-atb": "8.5.0"}),
    ],
)
def test_the_newest_official_images_pass_with_their_layer_judged_ok(tmp_path, name, cann, stack):
    code, report = doctor_json(name, tmp_path)
    assert ids(report, "error") == [] and code == 0
    recorded = {p["name"]: p["version"] for p in report["snapshot"]["stack"]}
    assert {k: recorded.get(k) for k in stack} == stack
    found = {(f["id"], f["severity"]): f for f in report["findings"]}
    stack_grades = {f["id"]: f["severity"] for f in report["findings"] if f["layer"] == "stack"}
    if name == "sglang-npu-a3":
        # triton-ascend 3.2.1 on CANN 8.5.0: the image installs it, Triton-Ascend's table asks for 9.0.0
        assert stack_grades.pop("ASC-STACK-TRITON") == "warn"
    assert set(stack_grades.values()) == {"ok"}
    assert found[("ASC-STACK-NNAL", "ok")]["title"] == f"NNAL {stack['nnal-atb']} with CANN {cann}: one release"
    assert found[("ASC-KERNELS-SOC", "ok")]["title"].startswith(f"CANN {cann} has kernels for ")
    if stack.get("triton-ascend") and name != "sglang-npu-a3":
        triton = found[("ASC-STACK-TRITON", "ok")]
        expected = f"triton-ascend {stack['triton-ascend']} with CANN {cann}: known-good"
        assert triton["title"] == expected + " (an official image installs both)"
        # the image pins it: vllm-ascend's `pip install triton-ascend==3.2.1`
        assert "vllm-project/vllm-ascend" in triton["source"]


def test_the_950_image_without_its_ops_package_names_it_from_the_official_images(tmp_path):
    # vllm-ascend v0.25.1rc1's Atlas 350 image minus kernel/ascend950: the error names the package the
    # CANN 9.0.1 950 image installs (compat/sources/cann-container-image-ops-packages.txt), not inferred
    host = build_host("vllm-ascend-v0.25.1rc1-a5", tmp_path)
    (host.root / "usr/local/Ascend/cann-9.0.1/opp/built-in/op_impl/ai_core/tbe/kernel/ascend950").rmdir()
    code, out, _ = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"],
        dict(host.environ, HOME="/root"),
    )
    (finding,) = [f for f in json.loads(out)["findings"] if f["id"] == "ASC-KERNELS-SOC"]
    assert code == 1 and finding["severity"] == "error"
    assert finding["title"] == "CANN 9.0.1 has no kernels for ascend950"
    assert finding["fix"].startswith("./Ascend-cann-950-ops_9.0.1_linux-")
    assert finding["fix"].endswith(".run --install")  # documented: no "inferred" note


def test_the_recorded_mindie_image_passes_and_its_release_is_a_note(tmp_path):
    # mindie:2.1.RC1-800I-A2 as captured (corpus note): MindIE's table starts at 2.1.RC2, so 2.1.RC1
    # is not documented either way: a note, exit 0
    code, report = doctor_json("mindie-2.1.RC1", tmp_path)
    assert ids(report, "error") == [] and code == 0
    found = {(f["id"], f["severity"]): f for f in report["findings"]}
    assert found[("ASC-STACK-MINDIE", "info")]["title"] == "MindIE 2.1.RC1 is not in the data"
    assert found[("ASC-STACK-NNAL", "ok")]["title"] == "NNAL 8.2.RC1 with CANN 8.2.RC1: one release"
    parts = {p["name"]: p for p in report["snapshot"]["stack"]}
    assert parts["mindie"]["build"] == "2.1.RC1.B152" and parts["nnal-atb"]["abi_selected"] == "cxx_abi_0"


@pytest.mark.parametrize(("mindie", "severity"), [("2.3.0", "error"), ("2.1.RC2", "error"), ("2.2.RC1", "error")])
def test_a_mindie_of_another_cann_release_is_an_error_with_its_table(tmp_path, mindie, severity):
    host = build_host("mindie-2.1.RC1", tmp_path)
    info = host.root / "usr/local/Ascend/mindie/2.1.RC1/version.info"
    info.write_text(info.read_text().replace("MindIE 2.1.RC1.B152", f"MindIE {mindie}.B1"))
    code, out, err = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"], host.environ
    )
    (finding,) = [f for f in json.loads(out)["findings"] if f["id"] == "ASC-STACK-MINDIE"]
    assert finding["severity"] == severity and code == 1
    assert finding["source"] == "https://gitcode.com/Ascend/release-management/blob/master/MindIE/26.0.0/release.md"


def test_triton_ascend_on_the_300i_duo_is_an_error_naming_the_maintainers_answer(tmp_path):
    # vllm-ascend#7423: bishengir-compile "Cannot find option named 'Ascend310P3'" on a 310P3;
    # triton-ascend#1002: no plans to support it (issue #22 item 5)
    host = build_host("310p-duo", tmp_path)
    environ = dict(host.environ, HOME="/root")
    environ["PYTHONPATH"] = fake_site(tmp_path, {"triton_ascend": "3.2.0rc4"}) + ":" + environ["PYTHONPATH"]
    code, out, err = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"], environ
    )
    errors = {f["title"]: f for f in json.loads(out)["findings"] if f["id"] == "ASC-STACK-TRITON"}
    refused = errors["triton-ascend does not compile for ascend310p"]
    assert code == 1 and refused["severity"] == "error"
    assert refused["source"] == "https://github.com/triton-lang/triton-ascend/issues/1002"
    # its CANN 8.1.RC1 is older than every CANN the installation guide lists for 3.2.0rc4: also an error
    assert (
        errors["triton-ascend 3.2.0rc4 needs a newer CANN than 8.1.RC1"]["expected"]
        == "CANN 8.3.RC2 or 8.3.RC1 or 8.5.0.alpha1"
    )
