"""Triage confirms an ``undefined symbol`` of a log with ASC-ABI-SYMBOLS on the machine judged
(issue #23, item 5): the gcc-built torch/torch_npu roots of tests/abi/test_probe_checks.py, read
under --root, saved with --from, and in variants the log does not show."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

from ascenv.checks import run_checks
from ascenv.model import Snapshot
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from ascenv.triage import abi_confirm, triage
from ascenv.triage.abi_confirm import CHECK, logged
from ascenv.triage.scan import LineGroup
from ascenv.triage.verdict import CONFIRMED, NOT_CHECKABLE, RULED_OUT
from tests.abi.build import needs_tools
from tests.abi.test_probe_checks import CANN, SITE, site
from tests.cli_helpers import run_cli

pytestmark = needs_tools

CUSTOM = "_ZNK3c1010TensorImpl20is_contiguous_customEi"  # is_contiguous_custom(int) of the fixture's c10
ENV = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": f"{CANN}:/usr/local/Ascend/driver/lib64"}


def machine(tmp_path: Path, *, torch_new: bool, with_hccl: bool = True, torch_npu: bool = True) -> Path:
    root = site(tmp_path, torch_new=torch_new, with_hccl=with_hccl)
    for name, version in (("torch_npu", "2.8.0"), ("torch", "2.9.0")):
        if name == "torch_npu" and not torch_npu:
            continue
        info = root / SITE.lstrip("/") / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return root


def abi_verdict(log: str, snapshot: Snapshot) -> tuple[str, str]:
    """ASC-ABI-SYMBOLS's answer on the log's undefined symbols (in triage's list only where it
    decides, or no other check answers: test_not_checkable_is_listed_only_alone)."""
    lines = [LineGroup(text, 1, n) for n, text in enumerate(log.splitlines(), 1)]
    found = abi_confirm.abi_verdict(lines, snapshot, run_checks(snapshot, None))
    assert found is not None
    return found.verdict, found.reason


def in_triage(log: str, snapshot: Snapshot) -> list[tuple[str, str]]:
    result = triage(io.BytesIO(log.encode()), snapshot, None)
    return [(v.verdict, v.reason) for c in result.causes for v in c.verdicts if v.check == CHECK]


def log_of(lib: str, symbol: str) -> str:
    return (
        'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n    import torch_npu\n'
        f"ImportError: /usr/local/python3/lib/python3.11/site-packages/torch_npu/lib/{lib}: "
        f"undefined symbol: {symbol}\n"
    )


def test_the_logs_symbol_unbound_here_confirms(tmp_path: Path) -> None:
    snap = collect(Root(machine(tmp_path, torch_new=False)), ENV)
    verdict, reason = abi_verdict(log_of("libtorch_npu.so", CUSTOM), snap)
    assert verdict == CONFIRMED
    assert "libtorch_npu.so needs c10::TensorImpl::is_contiguous_custom(int) const: unbound here" in reason
    assert in_triage(log_of("libtorch_npu.so", CUSTOM), snap) == [(verdict, reason)]
    result = triage(io.BytesIO(log_of("libtorch_npu.so", CUSTOM).encode()), snap, None)
    assert any(c.confirmed for c in result.causes)


def test_the_same_log_on_a_machine_whose_pairing_links_is_ruled_out(tmp_path: Path) -> None:
    snap = collect(Root(machine(tmp_path, torch_new=True)), ENV)
    verdict, reason = abi_verdict(log_of("libtorch_npu.so", CUSTOM), snap)
    assert verdict == RULED_OUT
    assert f"{SITE}/torch_npu/lib/libtorch_npu.so binds every symbol it needs here" in reason
    assert in_triage(log_of("libtorch_npu.so", CUSTOM), snap) == [(verdict, reason)]


def test_a_saved_snapshot_confirms_as_the_root_does(tmp_path: Path) -> None:
    root = machine(tmp_path, torch_new=False)
    saved = tmp_path / "snap.json"
    assert run_cli(["snapshot", "--root", str(root), "-o", str(saved)], ENV)[0] == 0
    log = tmp_path / "log.txt"
    log.write_text(log_of("libtorch_npu.so", CUSTOM))
    for where in (["--from", str(saved)], ["--root", str(root)]):
        code, out, err = run_cli(["triage", str(log), *where, "--format", "json"], ENV)
        assert code == 1, err
        verdicts = [v for c in json.loads(out)["causes"] for v in c["verdicts"] if v["check"] == CHECK]
        assert [v["verdict"] for v in verdicts] == [CONFIRMED], where


def test_a_library_the_check_does_not_read_is_not_checkable(tmp_path: Path) -> None:
    # libtbe_adapter.so is CANN's (torch_npu 2.7.1 on CANN 8.3.RC1): the ABI check binds torch_npu's libraries
    snap = collect(Root(machine(tmp_path, torch_new=True)), ENV)
    verdict, reason = abi_verdict(log_of("libtbe_adapter.so", "_ZN2ge8TbeThing3runEv"), snap)
    assert verdict == NOT_CHECKABLE
    assert "libtbe_adapter.so is not among the libraries the ABI check binds" in reason


def test_without_torch_npu_the_check_read_nothing(tmp_path: Path) -> None:
    snap = collect(Root(machine(tmp_path, torch_new=False, torch_npu=False)), ENV)
    assert abi_verdict(log_of("libtorch_npu.so", CUSTOM), snap) == (
        NOT_CHECKABLE,
        "the ABI check read no libraries (no torch_npu in the Python judged)",
    )


def test_a_symbol_of_an_absent_library_is_not_ruled_out(tmp_path: Path) -> None:
    snap = collect(Root(machine(tmp_path, torch_new=True, with_hccl=False)), ENV)
    verdict, reason = abi_verdict(log_of("libtorch_npu.so", "HcclInit"), snap)
    assert verdict == NOT_CHECKABLE
    assert "libhccl.so, which is absent here (ASC-ABI-NEEDED)" in reason


def test_an_older_snapshot_without_the_bound_libraries_rules_nothing_out(tmp_path: Path) -> None:
    snap = collect(Root(machine(tmp_path, torch_new=True)), ENV)
    older = dataclasses.replace(snap, abi=dataclasses.replace(snap.abi, checked=()))
    assert abi_verdict(log_of("libtorch_npu.so", CUSTOM), older)[0] == NOT_CHECKABLE


def test_not_checkable_is_listed_only_alone(tmp_path: Path) -> None:
    # the version tables decide the cause of this log (ASC-TORCH-PAIR...): the binaries' silence
    # (no torch_npu here) must not reopen it, and is not listed
    snap = collect(Root(machine(tmp_path, torch_new=False, torch_npu=False)), ENV)
    log = log_of("libtorch_npu.so", CUSTOM)
    result = triage(io.BytesIO(log.encode()), snap, None)
    assert result.causes and all(c.verdicts for c in result.causes)
    assert in_triage(log, snap) == []
    # where no other check answers, it is the answer
    lines = [LineGroup(text, 1, n) for n, text in enumerate(log.splitlines(), 1)]
    alone = abi_confirm.with_abi_verdict((), lines, (), snap, run_checks(snap, None))
    assert [(v.check, v.verdict) for v in alone] == [(CHECK, NOT_CHECKABLE)]
    # a check of the cause that is ASC-ABI-SYMBOLS already is not asked twice
    assert abi_confirm.with_abi_verdict((), lines, (CHECK,), snap, run_checks(snap, None)) == ()


def test_logged_reads_library_and_symbol() -> None:
    lines = [
        LineGroup(f"ImportError: /a/b/libtorch_npu.so: undefined symbol: {CUSTOM}", 1, 1),
        LineGroup("OSError: libatb.so: undefined symbol: _ZN3atb9GroupTopkE, version VERS_1.0", 1, 2),
        LineGroup("undefined symbol: aclrtGetDevice", 2, 3),
        LineGroup(f"again /x/libtorch_npu.so: undefined symbol: {CUSTOM}", 1, 4),
    ]
    assert logged(lines) == [
        ("libtorch_npu.so", CUSTOM),
        ("libatb.so", "_ZN3atb9GroupTopkE"),
        (None, "aclrtGetDevice"),
    ]
