"""CANN installations: found, which one is active, links that dangle."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from ascenv.checks import check, finding
from ascenv.checks.npu import has_npu_hardware
from ascenv.checks.unreadable import unreadable_files, unreadable_finding
from ascenv.model import Finding, Severity, Snapshot


@check(
    "ASC-CANN-FOUND",
    layer="cann",
    title="a CANN installation exists",
    explain="""
CANN (toolkit, nnae or nnrt; from 8.5 the `cann-<version>` layout) provides the runtime, the
compiler and the built-in operators. ascenv looks in ASCEND_HOME_PATH/ASCEND_TOOLKIT_HOME,
/usr/local/Ascend/{cann,ascend-toolkit,nnae,nnrt}, /etc/Ascend/ascend_cann_install.info and
~/Ascend (research/formats-npu-smi.md §5).
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
everything that goes through `latest` fails to find libraries (research/peers-and-pain-points.md
§10 #13).
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
