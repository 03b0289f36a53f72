"""Triage answers "the device the runtime opened was not given to this container" with the judged
machine's device nodes and the device number the log names (ascenv/triage/device_confirm.py), on
fixture machines (tests/triage/machines.py) and logs the corpus does not contain: other device
numbers, vLLM and MindIE prefixes, Chinese text around the line, ANSI colours."""

from __future__ import annotations

import dataclasses
import functools
import io

import pytest

from ascenv import model
from ascenv.checks import load_checks
from ascenv.triage import LineGroup, load, triage
from ascenv.triage.device_confirm import CHECK, opened
from ascenv.triage.verdict import CONFIRMED, NOT_CHECKABLE, RULED_OUT
from tests.triage.machines import machine, matrix

CAUSE = "container_no_device"


@functools.cache
def table():
    return load(known_checks=set(load_checks()))


def device_verdicts(log: str, snapshot: model.Snapshot):
    result = triage(io.BytesIO(log.encode()), snapshot, matrix(), table())
    mine = [c for c in result.causes if c.cause == CAUSE]
    assert mine, [c.cause for c in result.causes]
    return result, [v for c in mine for v in c.verdicts if v.check == CHECK]


# the CANN runtime's message about a device it could not open (ACL_ERROR_RT_DEV_SETUP_ERROR), as
# other front-ends print it: none of these lines is in the corpus
VARIANTS = {
    "vllm-worker-device-5": (
        5,
        "(VllmWorker TP1 pid=2210) ERROR 11-30 08:01:02 [multiproc_executor.py:611] RuntimeError: "
        "ExchangeDevice: NPU function error: c10_npu::SetDevice(device), error code is 507033\n"
        "(VllmWorker TP1 pid=2210) ERROR 11-30 08:01:02 [multiproc_executor.py:611]   open device 5 failed, "
        "runtime result = 507033.\n",
    ),
    "chinese-ansi-device-2": (
        2,
        "\x1b[31m[ERROR]\x1b[0m 模型加载失败，设备初始化错误：\n"
        "\x1b[31mRuntimeError\x1b[0m: SetDevice error code is 507033\n"
        "        open device 2 failed, runtime result = 507033. 请检查容器挂载的设备\n",
    ),
    "mindie-device-7": (
        7,
        "[2026-11-02 10:00:01.123+08:00] [31337] [281473] [llm] [ERROR] [model_runner.py:88] "
        "aclrtSetDevice failed, ErrCode=507033\n"
        "[2026-11-02 10:00:01.124+08:00] [31337] [281473] [llm] [ERROR] open device 7 failed, "
        "runtime result = 507033.\n",
    ),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_device_the_container_was_not_given_confirms_it_and_ranks_it_first(name, tmp_path):
    device, log = VARIANTS[name]
    result, verdicts = device_verdicts(log, machine("pod_devices", tmp_path))
    assert [v.verdict for v in verdicts] == [CONFIRMED]
    assert f"device {device}" in verdicts[0].reason
    assert "/dev/davinci3, /dev/davinci4" in verdicts[0].reason and "ASCEND_VISIBLE_DEVICES=4,3" in verdicts[0].reason
    assert result.causes[0].cause == CAUSE and result.causes[0].confirmed is True


def test_a_device_the_container_has_is_not_checkable_not_ruled_out(tmp_path):
    # negative: the container was given card 3; the runtime's id 3 may still map elsewhere
    _, log = VARIANTS["vllm-worker-device-5"]
    result, verdicts = device_verdicts(log.replace("device 5", "device 3"), machine("pod_devices", tmp_path))
    assert [v.verdict for v in verdicts] == [NOT_CHECKABLE]
    assert "ASCEND_RT_VISIBLE_DEVICES" in verdicts[0].reason
    assert next(c for c in result.causes if c.cause == CAUSE).confirmed is not True


def test_a_host_that_has_the_device_rules_it_out(tmp_path):
    _, log = VARIANTS["mindie-device-7"]
    result, verdicts = device_verdicts(log, machine(None, tmp_path))
    assert [(v.verdict, v.reason) for v in verdicts] == [(RULED_OUT, "this host has /dev/davinci7")]
    assert next(c for c in result.causes if c.cause == CAUSE).confirmed is False


def test_a_machine_without_ascend_decides_nothing(tmp_path):
    _, log = VARIANTS["chinese-ansi-device-2"]
    empty = model.Snapshot(root=str(tmp_path))
    _, verdicts = device_verdicts(log, empty)
    assert [v.verdict for v in verdicts] == [NOT_CHECKABLE]
    assert "no CANN, NPU or Ascend driver" in verdicts[0].reason


def test_a_machine_without_any_node_confirms_it(tmp_path):
    snapshot = machine("pod_devices", tmp_path)
    bare = dataclasses.replace(
        snapshot,
        devices=dataclasses.replace(
            snapshot.devices, nodes=tuple(n for n in snapshot.devices.nodes if "davinci_" in n.path)
        ),
    )
    _, verdicts = device_verdicts(VARIANTS["mindie-device-7"][1], bare)
    assert [v.verdict for v in verdicts] == [CONFIRMED] and "no /dev/davinci* node" in verdicts[0].reason


def test_the_device_numbers_are_read_once_each_in_order():
    lines = [
        LineGroup("open device 1 failed, runtime result = 507033.", 1, 3),
        LineGroup("Open Device 12 failed", 2, 9),
        LineGroup("open device 1 failed again", 1, 12),
        LineGroup("reopen device 4 failed", 1, 13),  # not the runtime's phrase
        LineGroup("open device 99999 failed", 1, 14),  # no card has a five-digit number
    ]
    assert opened(lines) == [1, 12]
