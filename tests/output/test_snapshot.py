"""ascenv.output.snapshot: machine text is shown as read, never read as rich markup."""

from __future__ import annotations

import io

import pytest

from ascenv import model
from ascenv.output import Output
from ascenv.output.snapshot import render_snapshot


def test_markup_in_machine_text_is_printed_verbatim():
    # version.info and npu-smi output are free text: a "[/]" must not make rich raise
    chip = model.Chip(npu=0, chip=0, name="910B4", health="[red]OK", bus_id="0000:C1:00.0")
    snap = model.Snapshot(
        host=model.HostInfo(kernel="5.10.0-[/]", arch="aarch64"),
        driver=model.DriverInfo(version="25.0.[/]rc1"),
        npu=model.NpuInfo(npu_smi_version="[bold]24.1", chips=(chip,)),
        python=model.PythonInfo(executable="/usr/bin/python3", version="3.11.[/]"),
    )
    stdout = io.StringIO()
    render_snapshot(Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False), snap)
    text = stdout.getvalue()
    for shown in ("kernel 5.10.0-[/]", "Driver  25.0.[/]rc1", "npu-smi [bold]24.1", "[red]OK", "Python  3.11.[/]"):
        assert shown in text


PWNED = "\x1b]0;pwned\x07"


def test_control_characters_and_markup_in_snapshot_fields_are_shown_not_sent():
    # a snapshot or bundle from another machine is untrusted: ESC sequences (a window title, a
    # clear screen), C1 CSI, CR and newlines (forged lines) and rich markup are shown as text
    chip = model.Chip(npu=0, chip=0, name="910B4" + PWNED, health="[bold red]OK", bus_id="0000:C1:00.0\x9b2J")
    snap = model.Snapshot(
        host=model.HostInfo(kernel="5.10\r\x1b[2J", arch="aarch64"),
        driver=model.DriverInfo(version="25.0" + PWNED + "\x1b[2J"),
        npu=model.NpuInfo(chips=(chip,), errors=(model.ProbeError("npu-smi", "tool-error", "bad\nforged line"),)),
        cann=model.CannInfo(installs=(model.CannInstall(path="/opt/[red]x" + PWNED, kind="toolkit", version="8.0"),)),
        python=model.PythonInfo(
            executable="/usr/bin/python3",
            version="3.11",
            distributions=(
                model.Distribution("torch", "2.1" + PWNED, "/site"),
                model.Distribution("torch_npu", "[/]", "/site"),
            ),
        ),
    )
    stdout = io.StringIO()
    render_snapshot(Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False), snap)
    text = stdout.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\r" not in text
    for shown in (
        "kernel 5.10\\x0d\\x1b[2J",
        "Driver  25.0\\x1b]0;pwned\\x07\\x1b[2J",
        "910B4\\x1b]0;pwned\\x07",
        "[bold red]OK",
        "0000:C1:00.0\\x9b2J",
        "npu-smi: bad\\x0aforged line",
        "/opt/[red]x\\x1b]0;pwned\\x07",
        "torch 2.1\\x1b]0;pwned\\x07  torch_npu [/]",
    ):
        assert shown in text, shown
    assert not any(line.startswith("forged line") for line in text.splitlines())


def test_processes_are_listed_or_said_unknown():
    chip = model.Chip(npu=7, chip=0, name="910B", health="OK", bus_id="0000:02:00.0")
    proc = model.NpuProcess(npu=7, chip=0, pid=87322, name="python3", memory_mb=109)

    def shown(npu: model.NpuInfo) -> str:
        stdout = io.StringIO()
        out = Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False)
        render_snapshot(out, model.Snapshot(npu=npu))
        return next(line for line in stdout.getvalue().splitlines() if line.startswith("Processes"))

    whole = model.NpuInfo(chips=(chip,), processes=(proc,), processes_complete=True)
    assert shown(whole) == "Processes  87322 python3 (NPU 7 chip 0)"
    assert shown(model.NpuInfo(chips=(chip,), processes_complete=True)) == "Processes  none running"
    cut = model.NpuInfo(chips=(chip,), warnings=("processes unknown: the process table is cut",))
    assert shown(cut) == "Processes  unknown: the process table is cut"
    assert shown(model.NpuInfo(chips=(chip,), processes=(proc,))) == (
        "Processes  unknown: no whole npu-smi process table was read; listed: 87322 python3 (NPU 7 chip 0)"
    )


# --- a private key pasted into a probed install file (issue 28) ---------------------------------
KEY_LINES = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "c2VjcmV0LWtleS1ib2R5LWxpbmU=", "QUJDREVG=="]


@pytest.mark.parametrize(
    ("path", "label", "newline"),
    [
        ("/usr/local/Ascend/driver/version.info", "RSA PRIVATE KEY", "\n"),  # the report's reproducer
        ("/usr/local/Ascend/firmware/version.info", "OPENSSH PRIVATE KEY", "\r\n"),
        ("/etc/ascend_install.info", "ENCRYPTED PRIVATE KEY", "\n"),
    ],
)
def test_a_private_key_in_an_install_file_reaches_no_snapshot_output(tmp_path, path, label, newline):
    from tests.cli_helpers import run_cli
    from tests.fixture_hosts import build_host

    host = build_host("a2-cann800", tmp_path)
    target = host.root / path.lstrip("/")
    block = [f"-----BEGIN {label}-----", *KEY_LINES, f"-----END {label}-----", ""]
    target.write_text(target.read_text() + newline.join(block))
    for fmt in ("json", "human"):
        code, out, err = run_cli(
            ["snapshot", "--root", str(host.root), "--format", fmt, "-o", "snap.json"], host.environ, tmp_path
        )
        assert code == 0, err
        for written in (out, (tmp_path / "snap.json").read_text()):
            assert not any(line.rstrip("=") in written for line in KEY_LINES)
            assert "PRIVATE KEY" not in written
    assert '"version": "25.0.rc1.1"' in (tmp_path / "snap.json").read_text()  # the file was still read


def test_the_layer_above_torch_npu_is_shown_with_the_atb_build_and_markup_kept_as_text():
    parts = (
        model.StackPart(
            "nnal-atb", "9.1.0", "/usr/local/Ascend/nnal/atb/9.1.0", "v", None, ("cxx_abi_0", "cxx_abi_1"), "cxx_abi_1"
        ),
        model.StackPart("mindie", "2.1.RC1", "/usr/local/Ascend/mindie/2.1.RC1", "v", None, ("cxx_abi_0",)),
        model.StackPart("vllm-ascend", "[bold]0.23.0", "/site/vllm_ascend-0.23.0.dist-info", "m"),
    )
    stdout = io.StringIO()
    render_snapshot(
        Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False), model.Snapshot(stack=parts)
    )
    text = stdout.getvalue()
    assert "Stack  nnal-atb 9.1.0  cxx_abi_1  /usr/local/Ascend/nnal/atb/9.1.0" in text
    assert "Stack  mindie 2.1.RC1  cxx_abi_0" in text  # none selected: the builds installed
    assert "Stack  vllm-ascend [bold]0.23.0  /site/" in text
