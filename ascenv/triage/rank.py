"""From matched signatures to ranked causes, each confirmed or ruled out by the machine.

Each check behind a cause answers confirmed / ruled out / not checkable with its reason
(``verdict``). A cause is confirmed (``True``) when one check confirms it (or its package rule
holds: numpy >= 2 installed in the target Python), ruled out (``False``) only when every check
could look and found nothing wrong, and unknown (``None``) otherwise. The same cause named
by several signatures is one entry with all their lines. Ranking: confirmed first, unknown next,
ruled out last; inside each, causal lines before generic wrappers, then the earliest line in the
log, then the signature table's weight, raised by context lines (a ``boost`` signature: a JIT
front-end named in the log makes "built for another CANN" the likelier reading of a kernel fault).
A log no signature names ranks one cause, ``other`` unrecognised, quoting its last error line
(``last_error``): the corpus vocabulary's cause outside the Ascend stack, never confirmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ascenv.model import Finding, Severity, Snapshot, normalize_name
from ascenv.triage.abi_confirm import with_abi_verdict
from ascenv.triage.device_confirm import with_device_verdict
from ascenv.triage.last_error import last_error
from ascenv.triage.scan import LineGroup, ScanResult, clean_line, quote
from ascenv.triage.signatures import CauseRule
from ascenv.triage.type_confirm import with_type_verdict
from ascenv.triage.verdict import CONFIRMED, NOT_CHECKABLE, RULED_OUT, CheckVerdict, Machine, judge_check, overall

MAX_LINES = 8  # quoted line groups per cause


@dataclass(frozen=True)
class Cause:
    cause: str
    detail: Optional[str]
    layer: str
    weight: float
    wrapper: bool  # only generic wrapper messages name it: ranked after the causal lines
    lines: tuple[LineGroup, ...]
    checks: tuple[str, ...]  # the checks that decide it, then the ones that show the facts
    confirmed: Optional[bool]
    evidence: tuple[str, ...]  # what the machine showed ("ASC-NPU-SMI: npu-smi failed (-8020)")
    verdicts: tuple[CheckVerdict, ...]  # each check's answer with its reason (empty: no machine)
    fix: str
    signatures: tuple[str, ...]
    source: tuple[str, ...]
    # lines that raised this cause without naming it (a JIT front-end in the log: a boost signature)
    context: tuple[LineGroup, ...] = ()


@dataclass(frozen=True)
class SignatureMatch:
    id: str
    layer: str
    summary: str
    codes: tuple[str, ...]
    count: int
    first_line: int
    lines: tuple[LineGroup, ...]
    source: tuple[str, ...]


@dataclass(frozen=True)
class TriageResult:
    causes: tuple[Cause, ...]  # most likely first
    signatures: tuple[SignatureMatch, ...]
    findings: tuple[Finding, ...]  # the doctor's findings on the machine judged (empty: not run)
    checked: bool  # a machine was examined
    machine: Optional[Machine]  # what was judged (None: the log alone)
    bytes_read: int
    lines: int
    binary: bool

    @property
    def recognised(self) -> bool:
        """A line of the log is an error of the Ascend stack ascenv knows (a signature matched)."""
        return any(c.signatures for c in self.causes)

    @property
    def any_confirmed(self) -> bool:
        return any(c.confirmed for c in self.causes)

    @property
    def doctor_errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.ERROR)


class _Merged:
    def __init__(self, rule: CauseRule, layer: str, first_line: int) -> None:
        self.rule = rule  # the heaviest rule seen (its fix is the one shown)
        self.layer = layer
        self.weight = rule.weight
        self.first_line = first_line
        self.lines: list[LineGroup] = []
        self.checks: list[str] = []
        self.context: list[str] = []
        self.packages: list[CauseRule] = []
        self.warnings_confirm: list[str] = []  # checks whose warnings confirm
        self.details: list[str] = []
        self.signatures: list[str] = []
        self.source: list[str] = []
        self.raised_by: list[LineGroup] = []  # the context lines that raised its weight
        self.wrapper = True  # until a signature that is not a wrapper names it


def rank(
    scan: ScanResult,
    findings: Optional[Sequence[Finding]],
    snapshot: Optional[Snapshot],
    machine: Optional[Machine] = None,
    matrix: object = None,  # the compat data the checks used (its hardware table names the chip)
) -> TriageResult:
    merged: dict[tuple, _Merged] = {}
    boosts = [hit for hit in scan.hits if hit.signature.boost]
    for hit in scan.hits:
        sig = hit.signature
        if sig.boost:
            continue
        for rule in sig.causes:
            # one entry per cause name; "other" is as many causes as it has details
            key = (rule.cause, rule.detail if rule.cause == "other" else None)
            entry = merged.get(key)
            if entry is None:
                entry = merged[key] = _Merged(rule, sig.layer, hit.first_line)
            elif rule.weight > entry.weight:
                entry.rule, entry.layer, entry.weight = rule, sig.layer, rule.weight
            if rule.detail:
                _extend(entry.details, (rule.detail,))
            entry.first_line = min(entry.first_line, hit.first_line)
            _extend(entry.lines, hit.groups)
            _extend(entry.checks, rule.checks)
            _extend(entry.context, rule.context)
            _extend(entry.signatures, (sig.id,))
            entry.wrapper = entry.wrapper and sig.wrapper
            _extend(entry.source, sig.source)
            if rule.package:
                entry.packages.append(rule)
            if rule.warnings_confirm:
                _extend(entry.warnings_confirm, rule.checks)
    _apply_boosts(merged, boosts)
    causes = []
    for (cause, _), entry in merged.items():
        verdicts = _decide(entry, findings, snapshot, machine)
        if findings is not None and snapshot is not None:  # an `undefined symbol`: the binaries decide too (#23)
            verdicts = with_abi_verdict(verdicts, entry.lines, entry.checks, snapshot, findings)
        if machine is not None and snapshot is not None:  # "open device N failed": is N given here?
            verdicts = with_device_verdict(cause, verdicts, entry.lines, snapshot, machine)
            # the chip has the type? (the chip named by the same hardware table as the checks: --compat too)
            verdicts = with_type_verdict(cause, verdicts, entry.lines, snapshot, machine, hardware=matrix)
        confirmed = overall(verdicts) if verdicts else None
        evidence = tuple(f"{v.check}: {v.reason}" for v in verdicts if v.verdict != NOT_CHECKABLE)
        lines = tuple(sorted(entry.lines, key=lambda g: g.first_line)[:MAX_LINES])
        causes.append(
            Cause(
                cause=cause,
                detail="; ".join(entry.details) or None,
                layer=entry.layer,
                weight=entry.weight,
                wrapper=entry.wrapper,
                lines=lines,
                checks=tuple(entry.checks) + tuple(c for c in entry.context if c not in entry.checks),
                confirmed=confirmed,
                evidence=evidence,
                verdicts=verdicts,
                fix=entry.rule.fix,
                signatures=tuple(entry.signatures),
                source=tuple(entry.source),
                context=tuple(entry.raised_by),
            )
        )
    if not causes and scan.lines:
        causes.append(_unrecognised(scan))
    order = {True: 0, None: 1, False: 2}
    # the earliest causal line first, not the loudest: a root cause ("No space left on device") is
    # followed by its consequences ("TbeInitialize failed"); generic wrappers go after
    causes.sort(key=lambda c: (order[c.confirmed], c.wrapper, c.lines[0].first_line if c.lines else 0, -c.weight))
    matches = tuple(
        SignatureMatch(
            h.signature.id,
            h.signature.layer,
            h.signature.summary,
            h.signature.codes,
            h.count,
            h.first_line,
            h.groups,
            h.signature.source,
        )
        for h in scan.hits
    )
    return TriageResult(
        causes=tuple(causes),
        signatures=matches,
        findings=tuple(findings or ()),
        checked=findings is not None,
        machine=machine if findings is not None else None,
        bytes_read=scan.bytes_read,
        lines=scan.lines,
        binary=scan.binary,
    )


# what the cause vocabulary calls "other": the application, its configuration or an upstream bug
# (the corpus README of the labelled logs); no machine check decides it
UNRECOGNISED = "no error of the Ascend stack recognised in this log"
UNRECOGNISED_FIX = (
    "the error is the program's own, not one of the driver, CANN, torch_npu, kernels, devices or package"
    " indexes that ascenv knows: read its last error (quoted) and the program's documentation;"
    " `ascenv doctor` checks the stack itself"
)


def _unrecognised(scan: ScanResult) -> Cause:
    """``other``, ranked when no signature names a cause: the log's last error line quoted."""
    found = last_error(scan.tail, scan.lines)
    lines = () if found is None else (LineGroup(quote(clean_line(found[1])), 1, found[0]),)
    return Cause(
        cause="other",
        detail=UNRECOGNISED,
        layer="application",
        weight=0.0,
        wrapper=True,
        lines=lines,
        checks=(),
        confirmed=None,
        evidence=(),
        verdicts=(),
        fix=UNRECOGNISED_FIX,
        signatures=(),
        source=(),
    )


def _apply_boosts(merged: dict[tuple, _Merged], boosts: Sequence) -> None:
    """A context line (a JIT front-end named in the log) makes a cause another line names more
    likely: its weight rises to the context rule's. It adds no cause and no quoted line (the
    earliest-line order stays the causal lines' own); the context signature is listed with it."""
    for hit in boosts:
        sig = hit.signature
        for rule in sig.causes:
            entry = merged.get((rule.cause, rule.detail if rule.cause == "other" else None))
            if entry is None or rule.weight <= entry.weight:
                continue
            entry.weight = rule.weight
            _extend(entry.raised_by, hit.groups[:1])
            _extend(entry.signatures, (sig.id,))
            _extend(entry.source, sig.source)


def _extend(target: list, items: Sequence) -> None:
    for item in items:
        if item not in target:
            target.append(item)


def _decide(
    entry: _Merged, findings: Optional[Sequence[Finding]], snapshot: Optional[Snapshot], machine: Optional[Machine]
) -> tuple[CheckVerdict, ...]:
    if findings is None or snapshot is None or machine is None:
        return ()
    if entry.packages:
        return (_decide_package(entry.packages[0], snapshot, machine),)
    from ascenv.checks import load_checks

    registry = load_checks()
    return tuple(
        judge_check(check, registry[check].layer, machine, findings, check in entry.warnings_confirm)
        for check in entry.checks
        if check in registry and not registry[check].suggests  # a suggester is shown, never judged
    )


def _decide_package(rule: CauseRule, snapshot: Snapshot, machine: Machine) -> CheckVerdict:
    from packaging.version import InvalidVersion, Version

    assert rule.package is not None and rule.package_min is not None
    name = f"package:{rule.package}"
    # a package version decides a cause of the Ascend stack (numpy 2 under CANN's Python
    # components) only on a machine that has that stack: without CANN, a driver or an NPU the log
    # came from another machine, and this one's Python did not run the failing program
    missing = machine.missing(("ascend", "python"))
    if missing:
        return CheckVerdict(name, NOT_CHECKABLE, missing)
    python = snapshot.python
    installed = python.packages.get(normalize_name(rule.package))
    if installed is None:
        return CheckVerdict(name, RULED_OUT, f"{rule.package} is not installed in {python.executable}")
    try:
        holds = Version(installed) >= Version(rule.package_min)
    except InvalidVersion:
        return CheckVerdict(name, NOT_CHECKABLE, f"{rule.package} {installed}: not a version ascenv can compare")
    relation = ">=" if holds else "<"
    text = f"{rule.package} {installed} installed ({relation} {rule.package_min}) in {python.executable}"
    return CheckVerdict(name, CONFIRMED if holds else RULED_OUT, text)
