"""The npu-smi parsers against captures collected after the parsers were written (held out).

tests/data/npu_smi_heldout/ holds npu-smi outputs from public issues and a README (each file's
first line names its source); labels.json says what a human reads
from each. Nothing here was used to write the parsers: the score below is how ascenv does on
unseen output, and a file that stops parsing right fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ascenv.model import PROCESSES_UNKNOWN, NpuInfo
from ascenv.probe.npu_smi import parse_board, parse_chip_map, parse_info, parse_key_values
from tests.conftest import load_capture

HELDOUT = Path(__file__).resolve().parents[1] / "data" / "npu_smi_heldout"
LABELS: dict[str, dict[str, Any]] = {
    name: label for name, label in json.loads((HELDOUT / "labels.json").read_text("utf-8")).items() if name != "_readme"
}

# Measured before any change to the parsers for this data (s33 baseline): 18/20 right; the two
# wrong were 950 key : value captures with a reader's "# ..." note after the value, found through a
# code index that names no repository and so not kept here (README.md). A second batch of 5
# (h21-h25, cut A2/A3 pastes) was added after that fix and read 5/5 before any further change.
# Files ascenv still reads wrong; a file leaving this set is progress, one joining it a regression.
KNOWN_WRONG: set[str] = set()
_BOARD_KEYS = ("software_version", "firmware_version", "compatibility", "product_name", "pci_device_id", "chip_count")
# Words ascenv uses when it says a capture is cut short (npu_smi.py warnings).
_CUT_WORDS = ("cut", "ends before", "missing", "skips lines")


def _cut_noted(info: NpuInfo) -> bool:
    notes = [warning for warning in info.warnings if not warning.startswith(PROCESSES_UNKNOWN)]
    return any(word in note for note in notes for word in _CUT_WORDS)


def _info_mismatches(info: NpuInfo, label: dict[str, Any]) -> list[str]:
    wrong = []
    for key in ("npu_smi_version", "driver_version"):
        if key in label and getattr(info, key) != label[key]:
            wrong.append(f"{key}: {getattr(info, key)!r} != {label[key]!r}")
    chips = label.get("chips", [])
    if len(info.chips) != len(chips):
        wrong.append(f"chips: {[(c.npu, c.chip) for c in info.chips]} != {[(c['npu'], c['chip']) for c in chips]}")
    for got, want in zip(info.chips, chips):
        for key, value in want.items():
            if getattr(got, key) != value:
                wrong.append(f"NPU {want['npu']} chip {want['chip']} {key}: {getattr(got, key)!r} != {value!r}")
    if "processes" in label:
        got_procs = [[p.npu, p.chip, p.pid, p.name, p.memory_mb, p.container_pid] for p in info.processes]
        if got_procs != label["processes"]:
            wrong.append(f"processes: {got_procs} != {label['processes']}")
    if label.get("processes_complete") is not None and info.processes_complete != label["processes_complete"]:
        wrong.append(f"processes_complete: {info.processes_complete} != {label['processes_complete']}")
    if label.get("cut") is not None and _cut_noted(info) != label["cut"]:
        wrong.append(f"cut noted: {_cut_noted(info)} != {label['cut']} (warnings {list(info.warnings)})")
    if "errors" in label and sorted(e.code or "" for e in info.errors) != sorted(label["errors"]):
        wrong.append(f"errors: {[e.code for e in info.errors]} != {label['errors']}")
    return wrong


def mismatches(name: str) -> list[str]:
    """What ascenv reads differently from the label of held-out capture ``name`` (empty: read right)."""
    label = LABELS[name]
    text = load_capture(HELDOUT / name)
    command = label["command"]
    if command == "info":
        return _info_mismatches(parse_info(text, source=name), label)
    if command == "board":
        board = parse_board(text, label["npu"])
        wrong = [
            f"{key}: {getattr(board, key)!r} != {label[key]!r}"
            for key in _BOARD_KEYS
            if getattr(board, key) != label[key]
        ]
        wrong += [
            f"field {key}: {board.fields.get(key)!r} != {value!r}"
            for key, value in label.get("fields", {}).items()
            if board.fields.get(key) != value
        ]
        return wrong
    if command == "chip_map":
        got = [[e.npu, e.chip, e.logic_id, e.name] for e in parse_chip_map(text)]
        return [] if got == label["entries"] else [f"entries: {got} != {label['entries']}"]
    if command == "key_values":
        values = dict(parse_key_values(text))
        return [f"{k}: {values.get(k)!r} != {v!r}" for k, v in label["values"].items() if values.get(k) != v]
    raise AssertionError(f"labels.json: unknown command {command!r} for {name}")


def test_every_heldout_file_has_a_label_and_a_source() -> None:
    files = sorted(p.name for p in HELDOUT.glob("*.txt"))
    assert files == sorted(LABELS)
    for name in files:
        assert (HELDOUT / name).read_text("utf-8").startswith("# source: "), name


def test_heldout_score(capsys: Any) -> None:
    wrong = {name: found for name in sorted(LABELS) if (found := mismatches(name))}
    with capsys.disabled():
        print(f"\nnpu-smi held-out: {len(LABELS) - len(wrong)}/{len(LABELS)} parsed right; wrong: {sorted(wrong)}")
        for name, found in wrong.items():
            print(f"  {name}: {found[:3]}")
    assert set(wrong) <= KNOWN_WRONG, {name: wrong[name] for name in set(wrong) - KNOWN_WRONG}
