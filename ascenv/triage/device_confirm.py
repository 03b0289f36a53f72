"""Confirm "the device the runtime opened was not given to this container" with the judged
machine's device nodes.

The CANN runtime names the device it could not open: "open device 1 failed, runtime result =
507033" (ACL_ERROR_RT_DEV_SETUP_ERROR). A container reaches a card only through the
``/dev/davinciN`` node it was given: Ascend Docker Runtime mounts the nodes of the cards listed in
ASCEND_VISIBLE_DEVICES (github:Ascend/ascend-docker-runtime, runtime/main.go), a device plugin
those it allocated, and the runtime maps its logical ids to those cards
(aclrtGetPhyDevIdByLogicDevId; ASCEND_RT_VISIBLE_DEVICES renumbers them). So, for a cause of that
kind, ASC-DEV-NODES answers with the device the log names:

- confirmed when the judged machine has no ``/dev/davinciN`` of that number (or none at all);
- ruled out on a host (not a container) that has it;
- not checkable in a container that has it: which card the runtime's id maps to is not recorded,
  nor is it on a machine that is not an Ascend host (the log came from elsewhere).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

from ascenv.model import Snapshot
from ascenv.triage.scan import LineGroup
from ascenv.triage.verdict import CONFIRMED, NOT_CHECKABLE, RULED_OUT, CheckVerdict, Machine

CHECK = "ASC-DEV-NODES"
CAUSE = "container_no_device"
_OPENED = re.compile(r"\bopen device (\d{1,4}) failed", re.IGNORECASE)
_NODE = re.compile(r"/dev/davinci(\d+)$")
# the variables that say which cards a container was given and how the runtime numbers them
_VISIBLE = ("ASCEND_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES")


def opened(lines: Sequence[LineGroup]) -> list[int]:
    """The device numbers the runtime could not open, in the order the log names them, once each."""
    return list(dict.fromkeys(int(m.group(1)) for group in lines for m in _OPENED.finditer(group.text)))


def with_device_verdict(
    cause: str,
    verdicts: tuple[CheckVerdict, ...],
    lines: Sequence[LineGroup],
    snapshot: Snapshot,
    machine: Machine,
) -> tuple[CheckVerdict, ...]:
    """The verdicts of a device-not-given cause with ASC-DEV-NODES's answer on the device the log
    names; it replaces the check's general answer (nodes present at all), which it makes precise."""
    if cause != CAUSE:
        return verdicts
    mine = device_verdict(opened(lines), snapshot, machine)
    if mine is None:
        return verdicts
    return (*(v for v in verdicts if v.check != CHECK), mine)


def device_verdict(devices: Sequence[int], snapshot: Snapshot, machine: Machine) -> Optional[CheckVerdict]:
    if not devices:
        return None
    missing = machine.missing(("ascend",))
    if missing:
        return CheckVerdict(CHECK, NOT_CHECKABLE, missing)
    present = (_NODE.match(node.path) for node in snapshot.devices.nodes if node.exists)
    nodes = sorted(int(found.group(1)) for found in present if found)
    named = ", ".join(str(d) for d in devices)
    has = ", ".join(f"/dev/davinci{n}" for n in nodes) if nodes else "no /dev/davinci* node"
    given = "; ".join(f"{k}={snapshot.env.variables[k]}" for k in _VISIBLE if k in snapshot.env.variables)
    here = f"{has}{f' ({given})' if given else ''}"
    absent = [d for d in devices if d not in nodes]
    if absent:
        return CheckVerdict(
            CHECK, CONFIRMED, f"the log's runtime could not open device {named}; this machine has {here}"
        )
    if snapshot.devices.in_container:
        return CheckVerdict(
            CHECK,
            NOT_CHECKABLE,
            f"/dev/davinci{devices[0]} is in this container ({here}); which card the runtime's id "
            f"{devices[0]} maps to is not recorded (ASCEND_RT_VISIBLE_DEVICES renumbers them)",
        )
    return CheckVerdict(CHECK, RULED_OUT, "this host has " + ", ".join(f"/dev/davinci{d}" for d in devices))
