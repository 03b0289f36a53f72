"""CANN installations: found, which one is active, links that dangle or lag, fit with the driver (HDK)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from ascenv.checks import check, finding
from ascenv.checks._facts import (
    driver_file,
    driver_version,
    has_npu_hardware,
    hdk_context,
    judged_installs,
    not_comparable,
    parse,
)
from ascenv.checks._unreadable import unreadable_files, unreadable_finding
from ascenv.model import Finding, Severity, Snapshot
from ascenv.versions import ProductLine


@check(
    "ASC-CANN-FOUND",
    layer="cann",
    title="a CANN installation exists",
    explain="""
CANN (toolkit, nnae or nnrt; from 8.5 the `cann-<version>` layout) provides the runtime, the
compiler and the built-in operators. ascenv looks in ASCEND_HOME_PATH/ASCEND_TOOLKIT_HOME,
/usr/local/Ascend/{cann,ascend-toolkit,nnae,nnrt}, /etc/Ascend/ascend_cann_install.info and
~/Ascend.
""",
)
def cann_found(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    installs = snap.cann.installs
    unreadable = unreadable_files(snap.cann.errors)
    for error in unreadable:  # a root-only install (mode 750) read by a user is not "no CANN"
        yield unreadable_finding("ASC-CANN-FOUND", "CANN", error, severity=Severity.WARN if installs else None)
    if not installs and unreadable:
        return
    if not installs:
        yield finding(
            "ASC-CANN-FOUND",
            Severity.ERROR if has_npu_hardware(snap) else Severity.INFO,
            "no CANN installation found",
            found="nothing under /usr/local/Ascend, ~/Ascend or the ASCEND_* variables",
            expected="an Ascend-cann-toolkit (or nnae/nnrt) installation",
            fix=(
                "install Ascend-cann-toolkit_<version>_linux-<arch>.run --install"
                " (and the kernels/ops package for your chip)"
            ),
        )
        return
    if len(installs) > 1:
        winner = snap.cann.active
        listing = ", ".join(f"{i.version or '?'} ({i.path})" for i in installs)
        # Which one to source is ASC-ENV-SOURCED's finding (with the exact command).
        yield finding(
            "ASC-CANN-FOUND",
            Severity.INFO,
            f"{len(installs)} CANN installations",
            found=listing + (f"; active: {winner} (from {snap.cann.active_reason})" if winner else "; none active"),
            expected="one active install, chosen by the set_env.sh you source",
        )
    else:
        only = installs[0]
        yield finding(
            "ASC-CANN-FOUND",
            Severity.OK,
            f"CANN {only.version or '?'} at {only.path}",
            evidence=tuple(p for p in (only.info_file,) if p),
        )


@check(
    "ASC-CANN-LINK",
    layer="cann",
    title="latest / cann links resolve",
    explain="""
`ascend-toolkit/latest` (and, from CANN 8.5, `/usr/local/Ascend/cann`) are symlinks to the
version directory that set_env.sh and most tools use. After an uninstall they can dangle, and
everything that goes through `latest` fails to find libraries (Huawei case library:
https://www.hiascend.com/document/caselibrary/detail/topic_0000001574783333).
""",
)
def cann_links(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    for link in snap.cann.links:
        if link.dangling:
            # Relink only to an install beside the link: ascend-toolkit/latest must not lead to
            # an nnae or a cann-8.5 directory, nor a farm's latest/compiler to a whole install.
            siblings = [i for i in snap.cann.installs if posixpath.dirname(i.path) == posixpath.dirname(link.path)]
            fix = (
                f"ln -sfn {siblings[-1].path} {link.path}  # or reinstall the CANN it pointed to"
                if siblings
                else f"rm {link.path}  # and reinstall CANN"
            )
            yield finding(
                "ASC-CANN-LINK",
                Severity.ERROR,
                f"{link.path} dangles",
                found=f"{link.path} -> {link.target} (missing)",
                expected="a link to an installed CANN version",
                evidence=(link.path,),
                fix=fix,
            )


_FIT_SEVERITY = {
    "matched": Severity.OK,
    "compatible": Severity.OK,
    "known-working": Severity.OK,
    "newer-than-matched": Severity.INFO,
    "unknown": Severity.INFO,
    "older-than-matched": Severity.WARN,
    "not-listed": Severity.INFO,  # the table names other HDKs: it says nothing about this one
    "newer-than-data": Severity.INFO,
    "below-minimum": Severity.ERROR,
    "incompatible": Severity.ERROR,
}
_FIT_WORDS = {
    "matched": "the HDK released with it",
    "compatible": "in Huawei's compatibility list",
    "known-working": "paired with it in an install guide",
    "newer-than-matched": "newer than the HDK released with it; no list says yes or no",
    "unknown": "no HDK data for this CANN",
    "older-than-matched": "older than the HDK released with it",
    "not-listed": "not named by Huawei's compatibility list for it (not documented either way)",
    "newer-than-data": "newer than every HDK in the compatibility data (not documented yet)",
    "below-minimum": "below the documented minimum",
    "incompatible": "explicitly incompatible",
}


@check(
    "ASC-CANN-DRIVER",
    layer="cann",
    title="CANN fits the installed driver (HDK)",
    explain="""
Each CANN release ships with an HDK (driver + firmware) release ("matched", from ascend-deployer's
required_soft and the release notes); Huawei also publishes compatibility lists and, from CANN
8.5, minimums: 8.5.x/9.0.x need HDK >= 25.0.X, 9.1.x needs >= 25.2.X (25.0.X is explicitly "N").
Below a documented minimum or explicitly incompatible is an error; older than the matched HDK
(no minimum documented before 8.5) is a warning; newer than matched
with no list is a note; a driver the published list does not name, or newer than every HDK in
the data, is a note too (not documented is never a downgrade advice). Data: compat/cann.toml,
each row with its release note.
""",
)
def cann_driver(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    driver = driver_version(snap)
    if matrix is None or not driver or not snap.cann.installs:
        return
    context, hdk_line = hdk_context(snap, matrix)
    for install in judged_installs(snap):
        evidence = tuple(p for p in (install.info_file,) if p) + driver_file(snap)
        odd = not_comparable(install.version, ProductLine.CANN) or not_comparable(driver, ProductLine.DRIVER)
        if odd:
            yield finding(
                "ASC-CANN-DRIVER",
                Severity.INFO,
                f"CANN {install.version or '?'} vs driver {driver}: not comparable",
                found=odd,
                expected="release version strings (8.0.RC2, 24.1.rc2.2)",
                evidence=evidence,
            )
            continue
        verdict = matrix.driver_fit(install.version, driver, applies_to=context, hdk_line=hdk_line)
        fit = verdict.fit.value
        severity = _FIT_SEVERITY[fit]
        rules = verdict.evidence
        if severity is Severity.ERROR and rules and all(r.provenance.status.value != "documented" for r in rules):
            # INFERRED or CONFLICT facts are reported at a lower confidence, never as a failure
            severity = Severity.WARN
        hdk = ", ".join(dict.fromkeys(t for r in rules for t in r.hdk_text))
        soft = sorted({r.provenance.status.value for r in rules} - {"documented"})
        as_of = getattr(matrix, "as_of", "")
        if fit == "unknown" and not rules:
            found = _no_hdk_data(matrix, install.version or "?", driver, as_of)
        elif severity is Severity.INFO and fit in ("not-listed", "newer-than-data"):
            found = f"driver {driver} is {_FIT_WORDS[fit]} (data as of {as_of}); documented for CANN "
            found += f"{install.version}: HDK {hdk or '-'}"
        else:
            found = f"driver {driver} is {_FIT_WORDS[fit]}" + (f" ({hdk})" if hdk else "")
        found += f"; the source marks this {'/'.join(soft)}" if soft else ""
        sources = tuple(f"compat: {r.provenance.source[0]}" for r in rules[:2])
        cited = {"source": rules[0].provenance.url if rules else "", "data_as_of": as_of}
        title = f"CANN {install.version} with driver {driver}: {fit.replace('-', ' ')}"
        if severity in (Severity.OK, Severity.INFO):
            yield finding("ASC-CANN-DRIVER", severity, title, found=found, evidence=evidence + sources, **cited)
            continue
        rules_here = matrix.hdk_rules_for(install.version, applies_to=context, hdk_line=hdk_line)
        listed = [t for r in rules_here if r.kind.value in ("matched", "compatible") for t in r.hdk_text]
        floors = [t for r in rules_here if r.kind.value == "minimum" for t in r.hdk_text]
        # several sources may pair an HDK with the release (its note, a bundle): the oldest is enough
        matched = [r.hdk_text[0] for r in sorted(rules_here, key=lambda r: r.floor) if r.kind.value == "matched"]
        allowed = [v.cann.raw for v in matrix.cann_for_driver(driver, applies_to=context, hdk_line=hdk_line)]
        upgrade = (
            f"install the HDK {matched[0]} (driver, then firmware) released with CANN {install.version}"
            if matched
            else f"install an HDK driver listed for CANN {install.version}"
        )
        keep = f", or keep the driver and use CANN {', '.join(allowed[:4])}" if allowed else ""
        yield finding(
            "ASC-CANN-DRIVER",
            severity,
            title,
            found=found,
            expected="HDK "
            + (", ".join(dict.fromkeys(listed)) or "-")
            + (f" (at least {', '.join(floors)})" if floors else ""),
            evidence=evidence + sources,
            fix=upgrade + keep,
            **cited,
        )


def _no_hdk_data(matrix: Any, cann: str, driver: str, as_of: str) -> str:
    """The note for a CANN without HDK rules: newer than the data, or simply not published."""
    newest = max((r.version for r in matrix.cann_releases), default=None)
    version = parse(cann, ProductLine.CANN)
    if version is not None and newest is not None and version.commercial() > newest:
        return f"CANN {cann} is newer than every release in the compatibility data (as of {as_of}): no HDK list known"
    return f"no HDK compatibility published for CANN {cann} in the data (as of {as_of}); driver {driver} not judged"


@check(
    "ASC-CANN-LATEST",
    layer="cann",
    title="latest points to the newest install",
    explain="""
`ascend-toolkit/latest` (and `/usr/local/Ascend/cann` from 8.5) decide which CANN set_env.sh
activates. After installing a newer CANN beside an old one, a `latest` still pointing at the old
version gives "version mismatch" surprises: the new install is on disk but never used
(Huawei case library: https://www.hiascend.com/document/caselibrary/detail/topic_0000001574783333).
This may be on purpose, so it is a warning.
""",
)
def stale_latest(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    for install in snap.cann.installs:
        for link in install.links:
            family = posixpath.dirname(link)
            peers = [
                i
                for i in snap.cann.installs
                if i is not install
                and i.kind == install.kind
                and (posixpath.dirname(i.path) == family or install.kind == "cann")
            ]
            if not peers:
                continue
            mine = parse(install.version, ProductLine.CANN)
            versions = [(parse(p.version, ProductLine.CANN), p) for p in peers]
            if mine is None or mine.is_test_build or any(v is None or v.is_test_build for v, _ in versions):
                yield finding(
                    "ASC-CANN-LATEST",
                    Severity.INFO,
                    f"{link}: versions not comparable",
                    found=", ".join(f"{i.version or '?'} ({i.path})" for i in (install, *peers)),
                    expected="release version strings",
                    evidence=(link,),
                )
                continue
            newer = [(v, p) for v, p in versions if v is not None and v > mine]
            if newer:
                _, newest = max(newer, key=lambda pair: pair[0])
                yield finding(
                    "ASC-CANN-LATEST",
                    Severity.WARN,
                    f"{link} points to CANN {install.version}, {newest.version} is installed",
                    found=f"{link} -> {install.path}",
                    expected=f"{link} -> {newest.path} (unless you keep the older one on purpose)",
                    evidence=(link,),
                    fix=f"ln -sfn {newest.path} {link}",
                )
