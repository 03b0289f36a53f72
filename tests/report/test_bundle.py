"""ascenv/report/bundle.py: the members of a bundle, redacted, and report.md."""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile

import pytest

from ascenv import lockfile
from ascenv.checks import run_checks
from ascenv.model import (
    Board,
    CannInfo,
    CannInstall,
    Chip,
    DeviceNode,
    Devices,
    Distribution,
    DriverInfo,
    EnvInfo,
    FirmwareInfo,
    HostInfo,
    NpuInfo,
    PythonInfo,
    Snapshot,
)
from ascenv.output.report import markdown
from ascenv.redact import Known, Redactor
from ascenv.report import Bundle, Capture, Inputs, LogTriage, RawFile, pack
from ascenv.report import assemble as assemble_with
from tests.fixture_hosts import corpus_text

BOARD = "npu_smi/from_ascend_deployer_5.txt"  # npu-smi info -t board -i 0, "Serial Number : 1000000000"
HOME = "/home/zhang.wei"
HF_TOKEN = "hf_" + "Q7xk2LmN9pRt4VwZ8bYc3DfGh6JkMn5Ps1"
# every personal value the snapshot below holds; none may survive anywhere in the bundle
SECRETS = (
    "npu-node-17.cluster.example.org",
    "npu-node-17",
    "zhang.wei",
    "10.20.30.40",
    "fe80::1ff:fe23:4567:890a",
    "1000000000",
    "033VNY10MB000071",
    "t0k3n-value-123",
    "Pa55w0rd",
    "deploy:Pa55w0rd",
    HF_TOKEN,
    "hunter2secret",
)


def secret_snapshot() -> Snapshot:
    """A snapshot holding each kind of personal value once (constructed, not probed)."""
    return Snapshot(
        created="2026-01-01T00:00:00+00:00",
        ascenv_version="0.1.0",
        host=HostInfo(os_id="ubuntu", os_version="22.04", arch="aarch64", hostname="npu-node-17.cluster.example.org"),
        npu=NpuInfo(
            source="/usr/local/bin/npu-smi info",
            driver_version="25.0.rc1.1",
            chips=(Chip(0, 0, "910B4", "OK", "0000:C1:00.0"), Chip(1, 0, "910B4", "OK", "0000:C2:00.0")),
            boards=(
                Board(
                    0,
                    software_version="24.1.0.b062",
                    firmware_version="7.5.0.2.220",
                    fields={"Serial Number": "1000000000", "PCIe Bus Info": "0000:C1:00.0"},
                ),
                Board(1, fields={"Serial Number": "033VNY10MB000071"}),
            ),
        ),
        driver=DriverInfo(version="25.0.rc1.1", path="/usr/local/Ascend/driver"),
        firmware=FirmwareInfo(version="7.7.0.1.231", source="/usr/local/Ascend/firmware/version.info"),
        cann=CannInfo(
            installs=(
                CannInstall(
                    path=f"{HOME}/Ascend/ascend-toolkit/8.1.RC1", kind="toolkit", version="8.1.RC1", arch="aarch64"
                ),
            ),
            active=f"{HOME}/Ascend/ascend-toolkit/8.1.RC1",
        ),
        devices=Devices(nodes=(DeviceNode("/dev/davinci0", True), DeviceNode("/dev/davinci_manager", True))),
        env=EnvInfo(
            variables={
                "ASCEND_HOME_PATH": f"{HOME}/Ascend/ascend-toolkit/latest",
                "ASCEND_MODEL_TOKEN": "t0k3n-value-123",
                "ASCEND_PIP_MIRROR": "https://deploy:Pa55w0rd@mirror.example.org/simple",
                "ASCEND_SLOG_SERVER": "10.20.30.40:8080",
                "ASCEND_HCCL_IF": "fe80::1ff:fe23:4567:890a",
                "ASCENDC_NOTE": f"models fetched with {HF_TOKEN}",
                "ASCEND_LOCAL": "127.0.0.1",
            }
        ),
        python=PythonInfo(
            executable=f"{HOME}/.venv/bin/python",
            version="3.11.7",
            distributions=(
                Distribution("torch", "2.1.0", f"{HOME}/.venv/lib/python3.11/site-packages"),
                Distribution("te", "10.0.0.1", f"{HOME}/.venv/lib/python3.11/site-packages"),  # looks like an IP
                Distribution("tokenizers", "0.19.1", f"{HOME}/.venv/lib/python3.11/site-packages"),
            ),
        ),
    )


def inputs(snapshot: Snapshot, **changes) -> Inputs:
    board = Capture(("/usr/local/bin/npu-smi", "info", "-t", "board", "-i", "0"), "ok", 0, corpus_text(BOARD), "")
    probe = Capture((f"{HOME}/.venv/bin/python", "-B", "-c", "import sys"), "ok", 0, "{}", "")
    config = RawFile(
        "/etc/pip.conf",
        b"[global]\nindex-url = https://deploy:Pa55w0rd@mirror.example.org/simple\npassword=hunter2secret\n",
        "files/01-pip.conf",
    )
    base = dict(
        snapshot=snapshot,
        findings=tuple(run_checks(snapshot)),
        lock=lockfile.lock_from_snapshot(snapshot, generator_version="0.1.0"),
        lock_origin="generated from snapshot.json",
        created="2026-01-01T00:00:00+00:00",
        command="ascenv report",
        captures=(board, probe),
        files=(config,),
    )
    base.update(changes)
    return Inputs(**base)


def assemble(inputs: Inputs) -> Bundle:
    return assemble_with(inputs, markdown)


def tar_bytes(bundle_bytes: bytes) -> bytes:
    return gzip.decompress(bundle_bytes)


def members_of(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}


# --- redaction ----------------------------------------------------------------------------------


def test_no_secret_survives_anywhere_in_the_bundle():
    data = pack(assemble(inputs(secret_snapshot())))
    raw = tar_bytes(data)
    for secret in SECRETS:
        assert secret.encode() not in raw, secret


def test_placeholders_keep_the_structure_readable_and_consistent():
    bundle = assemble(inputs(secret_snapshot()))
    snap = json.loads(bundle.members["snapshot.json"])
    assert snap["host"]["hostname"] == "<host-1>"
    assert snap["python"]["executable"] == "/home/<user-1>/.venv/bin/python"
    assert snap["cann"]["active"] == "/home/<user-1>/Ascend/ascend-toolkit/8.1.RC1"
    assert [b["fields"]["Serial Number"] for b in snap["npu"]["boards"]] == ["<serial-1>", "<serial-2>"]
    variables = snap["env"]["variables"]
    assert variables["ASCEND_MODEL_TOKEN"] == "<secret-1>"
    assert variables["ASCEND_PIP_MIRROR"] == "https://<secret-2>@<host-2>/simple"
    assert variables["ASCEND_SLOG_SERVER"] == "<ip-1>:8080"
    assert variables["ASCEND_HCCL_IF"] == "<ip-2>"
    assert variables["ASCENDC_NOTE"] == "models fetched with <secret-3>"
    # the same serial is the same placeholder in the raw capture; the same host in the lock
    assert "Serial Number        : <serial-1>" in bundle.members["captures/npu-smi_info_-t_board_-i_0.txt"].decode()
    assert 'source = "<host-1>"' in bundle.members["ascenv.lock"].decode()
    assert "index-url = https://<secret-2>@<host-2>/simple" in bundle.members["files/01-pip.conf"].decode()
    assert bundle.redactions == {"host": 2, "user": 1, "ip": 2, "serial": 2, "secret": 4}


def test_versions_loopback_and_bus_ids_are_not_taken_for_secrets():
    bundle = assemble(inputs(secret_snapshot()))
    snap = json.loads(bundle.members["snapshot.json"])
    assert snap["firmware"]["version"] == "7.7.0.1.231"
    assert snap["npu"]["boards"][0]["firmware_version"] == "7.5.0.2.220"
    assert snap["python"]["packages"] == {"torch": "2.1.0", "te": "10.0.0.1", "tokenizers": "0.19.1"}
    assert snap["env"]["variables"]["ASCEND_LOCAL"] == "127.0.0.1"
    assert [c["bus_id"] for c in snap["npu"]["chips"]] == ["0000:C1:00.0", "0000:C2:00.0"]
    assert snap["devices"]["nodes"][0]["path"] == "/dev/davinci0"
    assert snap["host"]["os_id"] == "ubuntu"


def test_a_common_user_name_is_hidden_in_its_home_only():
    redactor = Redactor()
    redactor.add_known(Known(homes=("/home/dev",), users=("dev",)))
    data = {"exe": "/home/dev/.venv/bin/python", "node": "/dev/davinci0", "host": "dev"}
    redactor.discover(data)
    assert redactor.apply(data) == {"exe": "/home/<user-1>/.venv/bin/python", "node": "/dev/davinci0", "host": "dev"}
    assert redactor.counts == {"user": 1}


def test_known_home_outside_home_and_ip_inside_version_line():
    redactor = Redactor()
    redactor.add_known(Known(homes=("/data/users/li_na",)))
    text = "cache /data/users/li_na/atc_data\nnpu-smi 23.0.0.1   Version: 23.0.0.1\nmaster 192.168.1.20\n"
    redactor.discover_text(text)
    assert (
        redactor.apply_text(text)
        == "cache /data/users/<user-1>/atc_data\nnpu-smi 23.0.0.1   Version: 23.0.0.1\nmaster <ip-1>\n"
    )


def test_no_redact_keeps_values_and_says_so():
    bundle = assemble(inputs(secret_snapshot(), redact=False))
    snap = json.loads(bundle.members["snapshot.json"])
    assert snap["host"]["hostname"] == "npu-node-17.cluster.example.org"
    assert bundle.redactions == {} and bundle.redacted is False
    assert "**Not redacted** (`--no-redact`)" in bundle.members["report.md"].decode()
    assert json.loads(bundle.members["MANIFEST.json"])["redacted"] is False


def test_report_md_counts_what_was_redacted():
    text = assemble(inputs(secret_snapshot())).members["report.md"].decode()
    assert "**Redacted:** 2 host names, 1 user name, 2 IP addresses, 2 serial numbers, 4 secrets." in text
    assert "### ascenv doctor" in text and "### Versions" in text
    assert "| firmware | 7.7.0.1.231 | /usr/local/Ascend/firmware/version.info |" in text
    assert "/home/<user-1>/.venv/bin/python -B -c <ascenv python probe>" in text


def test_redacted_lock_is_valid_and_loads():
    bundle = assemble(inputs(secret_snapshot()))
    lock, warnings = lockfile.loads_lock(bundle.members["ascenv.lock"].decode(), "ascenv.lock")
    assert warnings == [] and lock.cann[0].path == "/home/<user-1>/Ascend/ascend-toolkit/8.1.RC1"


def test_the_report_core_imports_no_command_and_no_renderer():
    import ast
    from pathlib import Path

    import ascenv

    package = Path(ascenv.__file__).parent
    for module in [package / "redact.py", *sorted((package / "report").glob("*.py"))]:
        imported = set()
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
        assert not {m for m in imported if m.startswith(("ascenv.commands", "ascenv.output"))}, module.name


# --- log lines (report --log): host names, URL hosts, and the terminal (issue 28, T3) ------------
LOG_LINES = [
    "RuntimeError: EZ3002 \x1b]0;PWNED\x07 on node7.cluster.example.com\r",
    "[ERROR] HCCL 连接master.ai.example.cn:29500失败",
    "fetch https://u:p@proxy.corp.example.com:3128/simple failed\x1b[2J",
]


def _log_triage() -> LogTriage:
    quoted = [{"line": n, "text": text} for n, text in enumerate(LOG_LINES, 1)]
    markdown = "### ascenv triage: app.log\n\n" + "\n".join(f"    {line}" for line in LOG_LINES) + "\n"
    return LogTriage("app.log", {"causes": [{"id": "x", "lines": quoted}]}, markdown)


def test_log_lines_carry_no_host_name_url_host_or_userinfo():
    bundle = assemble(inputs(secret_snapshot(), triage=_log_triage()))
    for member in ("triage.json", "report.md"):
        text = bundle.members[member].decode()
        for value in ("node7.cluster.example.com", "master.ai.example.cn", "proxy.corp.example.com", "u:p@"):
            assert value not in text, (member, value)
    lines = json.loads(bundle.members["triage.json"])["causes"][0]["lines"]
    assert [line["text"].split(" on ")[-1] for line in lines[:1]] == ["<host-3>\r"]
    assert "连接<host-4>:29500失败" in lines[1]["text"]
    assert "https://<secret-5>@<host-5>:3128/simple" in lines[2]["text"]


@pytest.mark.parametrize("redact", [True, False])
def test_report_md_carries_no_raw_control_character_from_a_log(redact):
    report_md = assemble(inputs(secret_snapshot(), triage=_log_triage(), redact=redact)).members["report.md"].decode()
    assert re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", report_md) is None
    assert "EZ3002 \\x1b]0;PWNED\\x07 on" in report_md and "failed\\x1b[2J" in report_md and "\\x0d" in report_md
