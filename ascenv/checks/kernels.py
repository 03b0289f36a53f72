"""Built-in operators: kernels installed for this SoC, the --soc_version to compile for, compiler vs opp."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any, Optional

from ascenv.checks import check, finding
from ascenv.checks._facts import (
    accepted,
    describe_ranges,
    device_socs,
    effective_version,
    judged_installs,
    opp_abi_ranges,
    parse,
)
from ascenv.layout import KERNEL_DIR
from ascenv.model import CannInstall, Finding, Severity, Snapshot
from ascenv.versions import ProductLine


def _package(matrix: Any, install: CannInstall, unit: str) -> Optional[tuple[str, str, str]]:
    """(package name, status, where an inferred name comes from) for a compute unit in this CANN
    release, if the matrix knows: the release's own row or a package listing (documented; conflict
    when listings disagree), else the name an older release of the same packaging gives (inferred)."""
    version = parse(install.version, ProductLine.CANN) if matrix is not None else None
    found = matrix.ops_package(version, unit) if version is not None and not version.is_test_build else None
    if not found:
        return None
    basis = matrix.ops_package_basis(version, unit) or ""
    return found[0], found[1].value, basis


_UNSURE = {"inferred": "  # package name inferred", "conflict": "  # package name: the sources disagree"}


@check(
    "ASC-KERNELS-SOC",
    layer="kernels",
    title="built-in kernels installed for this SoC",
    explain="""
The toolkit holds no operator binaries: they come in a per-chip package (Ascend-cann-kernels-<chip>
up to 8.3, Ascend-cann-<chip>-ops from 8.5, mandatory there) installed into
opp/built-in/op_impl/ai_core/tbe/kernel/<compute unit>. Without it torch_npu fails with "please
check if the opp_kernel package is installed" (https://github.com/vllm-project/vllm-ascend/issues/237);
ascend-deployer checks the same directory. Package names per CANN release and compute unit come
from compat/cann.toml (release notes, the ascend conda channel's cann-<chip>-ops listing: 910,
910b, A3, 310p, 310b, 950; the run package each official CANN image, github:Ascend/cann-container-image,
installs for its chip, 8.1.RC1 to 9.1.0-beta.3; CANN's per-product install step, hicann/asc-tools;
the install guides' Conda ops table, instg_0093 of 8.5.0 and 9.0.0); several sources naming two
packages are a conflict, said in the fix; a release the data does not list gets the name its
nearest documented neighbour of the same packaging gives, marked inferred, and the error says
which release that is. The Ascend 950
(npu-smi Ascend950PR/Ascend950DT, PCI 0xd806) needs Ascend-cann-950-ops, the 310B
Ascend-cann-310b-ops.
""",
)
def kernels_for_soc(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    units = sorted({s.compute_unit for s in device_socs(snap, matrix) if s.compute_unit})
    for install in judged_installs(snap) if units else ():
        kernel_dir = posixpath.join(install.path, KERNEL_DIR)
        for unit in units:
            if unit in install.kernels:
                yield finding(
                    "ASC-KERNELS-SOC",
                    Severity.OK,
                    f"CANN {install.version or '?'} has kernels for {unit}",
                    evidence=(kernel_dir,),
                )
                continue
            package = _package(matrix, install, unit)
            origin = ""
            if package:
                name, status, basis = package
                arch = install.arch or snap.host.arch or "<arch>"
                fix = f"./{name}_{install.version}_linux-{arch}.run --install" + _UNSURE.get(status, "")
                if basis:
                    origin = (
                        f" (name inferred from {basis}; no install guide table or package listing "
                        f"saved for CANN {install.version})"
                    )
            else:
                name, fix = (
                    "the kernels/ops package",
                    f"install the kernels/ops package for {unit} of CANN {install.version or 'this install'}",
                )
            yield finding(
                "ASC-KERNELS-SOC",
                Severity.ERROR,
                f"CANN {install.version or '?'} has no kernels for {unit}",
                found=f"{kernel_dir}/ holds {', '.join(install.kernels) or 'nothing'}",
                expected=f"{kernel_dir}/{unit} from {name}{origin}",
                evidence=(kernel_dir,),
                fix=fix,
            )


@check(
    "ASC-KERNELS-TARGET",
    layer="kernels",
    renamed_from=("ASC-SOC-VERSION",),
    title="the --soc_version to compile for",
    explain="""
ATC and the operator compilers take `--soc_version=Ascend<Name>`, the Name column of npu-smi info
prefixed with "Ascend" (910B4 → Ascend910B4; ATC --soc_version doc, canncommercial 80RC2
atlasatc_16_0069). A3 prints "Ascend910"; its SoC is the board's Chip Name + "_" + NPU Name
(Ascend910_9392; CANN 8.5.0 operator guide atlas_ascendc_10_0068). A CANN can only target SoCs it
has a data/platform_config/<SoC>.ini for.
""",
)
def soc_version(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    installs = judged_installs(snap)
    for soc in device_socs(snap, matrix):
        if soc.soc_version is None:
            if soc.source.startswith("/sys/"):
                continue
            yield finding(
                "ASC-KERNELS-TARGET",
                Severity.INFO,
                f"SoC of npu-smi name {soc.name!r} unknown",
                found=f"npu-smi prints {soc.name!r} without board details",
                evidence=(soc.source,),
                fix="npu-smi info -t board -i 0  # --soc_version=<Chip Name>_<NPU Name>, e.g. Ascend910_9392",
            )
            continue
        unit = f" (compute unit {soc.compute_unit})" if soc.compute_unit else ""
        missing = [i for i in installs if i.socs and soc.soc_version not in i.socs]
        for install in missing:
            yield finding(
                "ASC-KERNELS-TARGET",
                Severity.WARN,
                f"CANN {install.version or '?'} cannot target {soc.soc_version}",
                found=f"no {soc.soc_version}.ini in "
                f"{install.path}/{install.arch or '<arch>'}-linux/data/platform_config",
                expected=f"a CANN release that supports {soc.soc_version}",
                evidence=(install.path,),
                fix="install a CANN release that lists this SoC (compat/cann.toml chips)",
            )
        yield finding(
            "ASC-KERNELS-TARGET",
            Severity.INFO,
            f"compile for --soc_version={soc.soc_version}",
            found=f"npu-smi name {soc.name} → {soc.soc_version}{unit}",
            evidence=(soc.source,),
            fix=f"atc ... --soc_version={soc.soc_version}",
        )


@check(
    "ASC-KERNELS-ABI",
    layer="kernels",
    renamed_from=("ASC-COMPILER-OPP",),
    title="compiler and built-in operators belong together",
    explain="""
compiler/version.info carries `required_opp_abi_version=">=6.3, <=7.7"`. CANN compares the
built-in operator package's opp/version.info Version with it (major + minor, the minor padded to
5 digits) and leaves the built-in operators out when it is outside — "Failed to verify the OPP"
E30006 + 507033 (vllm-ascend#4284). Source: github:hicann/metadef
base/common/plugin/plugin_manager.cc IsVendorVersionValid / GetEffectiveVersion
(@786891c02e5a7f509c6ffffd854e33ddefe3527c).
""",
)
def compiler_opp(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    for install in judged_installs(snap):
        required, opp = install.required_opp_abi_version, install.opp_version
        if not required or not opp:
            continue
        evidence = (
            posixpath.join(install.path, "compiler", "version.info"),
            posixpath.join(install.path, "opp", "version.info"),
        )
        ranges, effective = opp_abi_ranges(required), effective_version(opp)
        if ranges is None or effective is None:
            yield finding(
                "ASC-KERNELS-ABI",
                Severity.WARN,
                f"CANN {install.version or '?'}: opp version not comparable",
                found=f"required_opp_abi_version={required!r}, opp Version={opp!r}",
                expected='">=X.Y, <=X.Y" and a dotted version',
                evidence=evidence,
                fix="reinstall the toolkit and its kernels/ops package of one CANN release",
            )
        elif not accepted(effective, ranges):
            yield finding(
                "ASC-KERNELS-ABI",
                Severity.ERROR,
                f"CANN {install.version or '?'}: built-in operators {opp} rejected by the compiler",
                found=f"opp Version={opp} (effective {effective}) outside required_opp_abi_version "
                f"{required} {describe_ranges(ranges)}",
                expected="opp and compiler of the same CANN release",
                evidence=evidence,
                fix=f"reinstall the opp/kernels package of CANN {install.version or '<the toolkit version>'} "
                f"(or the toolkit matching opp {opp})",
            )
        else:
            yield finding(
                "ASC-KERNELS-ABI",
                Severity.OK,
                f"CANN {install.version or '?'}: opp {opp} accepted by the compiler ({required})",
                evidence=evidence,
            )
