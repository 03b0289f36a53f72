"""Operator packages made for the tests: a vendor tree in the layout of a real msopgen package
(the CANN 8.0.RC3 SinhCustom listing), packed by Debian's makeself with the flags of the CANN
project template's cmake/makeself.cmake (--gzip --complevel 4 --nomd5 --sha256, a help header,
./install.sh, archive made from "./"). The install.sh models CANN's --install-path install
(copy packages/vendors/<v> to DIR/vendors/<v>) and always writes a canary file first, so a test
can prove that nothing ran it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

import pytest

from ascenv import store

MAKESELF = shutil.which("makeself")
needs_makeself = pytest.mark.skipif(MAKESELF is None, reason="makeself is not installed (.ci/run installs it)")

ELF_X86_64 = b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x03\x00" + (62).to_bytes(2, "little") + b"\x00" * 44
ELF_AARCH64 = ELF_X86_64[:18] + (183).to_bytes(2, "little") + ELF_X86_64[20:]
HELP_INFO = "  --install-path                    Install operator package to specific dir path\n"
TBE = "op_impl/ai_core/tbe"

INSTALL_SH = """#!/bin/sh
# the canary: written whenever this script runs
echo ran > "{canary}"
root=""
for arg in "$@"; do
  case "$arg" in --install-path=*) root="${{arg#--install-path=}}";; esac
done
[ -n "$root" ] || {{ echo "only --install-path installs are modelled" >&2; exit 1; }}
case "$root" in /*) ;; *) echo "install path must be absolute" >&2; exit 1;; esac
mkdir -p "$root/vendors"
for vendor in packages/vendors/*; do
  name=$(basename "$vendor")
  mkdir -p "$root/vendors/$name"
  cp -rf "$vendor"/. "$root/vendors/$name/"
  mkdir -p "$root/vendors/$name/bin"
  line="export ASCEND_CUSTOM_OPP_PATH=$root/vendors/$name:\\${{ASCEND_CUSTOM_OPP_PATH}}"
  echo "$line" > "$root/vendors/$name/bin/set_env.bash"
done
echo "SUCCESS"
"""


def ops_info(*op_types: str) -> str:
    return json.dumps(
        {
            op: {
                "input0": {"name": "x", "dtype": "float16", "format": "ND", "paramType": "required"},
                "output0": {"name": "y", "dtype": "float16", "format": "ND", "paramType": "required"},
                "opFile": {"value": snake(op)},
                "dynamicShapeSupport": {"flag": "true"},
            }
            for op in op_types
        },
        indent=4,
    )


def kernel_config(op_type: str, unit: str) -> str:
    """kernel/config/<unit>/<op_file>.json in the format of CANN's built-in abs.json."""
    return json.dumps(
        {
            "binList": [
                {
                    "simplifiedKey": [f"{op_type}/d=0,p=0/1,2/1,2"],
                    "opMode": "dynamic",
                    "binInfo": {"jsonFilePath": f"{unit}/{snake(op_type)}/{op_type}_{'ab' * 16}.json"},
                }
            ]
        }
    )


def snake(op: str) -> str:
    import re

    return re.sub(r"(?<!^)([A-Z])", r"_\1", op).lower()


def vendor_tree(
    vendor_dir: Path,
    name: str = "customize",
    op_types: tuple[str, ...] = ("AddCustom",),
    units: tuple[str, ...] = ("ascend910b",),
    arch: str = "aarch64",
    compiler: Optional[str] = "7.7.0.1.238",
    kernel: bytes = b"kernel-v1",
    omit: tuple[str, ...] = (),
) -> Path:
    """One installed-layout vendor directory; ``omit`` leaves parts out: proto, tiling,
    ops_info, kernels, opapi, header, version."""
    elf = ELF_AARCH64 if arch == "aarch64" else ELF_X86_64
    files: dict[str, bytes] = {}
    if "proto" not in omit:
        files["op_proto/inc/op_proto.h"] = b"#pragma once\n"
        files[f"op_proto/lib/linux/{arch}/libcust_opsproto_rt2.0.so"] = elf + b"proto"
    if "tiling" not in omit:
        files[f"{TBE}/op_tiling/lib/linux/{arch}/libcust_opmaster_rt2.0.so"] = elf + b"tiling"
    if "opapi" not in omit:
        files["op_api/lib/libcust_opapi.so"] = elf + b"opapi"
    for unit in units:
        if "ops_info" not in omit:
            files[f"{TBE}/config/{unit}/aic-{unit}-ops-info.json"] = ops_info(*op_types).encode()
        for op in op_types:
            if "kernels" not in omit:
                files[f"{TBE}/kernel/{unit}/{snake(op)}/{op}_{'ab' * 16}.o"] = kernel
                files[f"{TBE}/kernel/{unit}/{snake(op)}/{op}_{'ab' * 16}.json"] = b'{"binFileName": "x"}'
                files[f"{TBE}/kernel/config/{unit}/{snake(op)}.json"] = kernel_config(op, unit).encode()
    for op in op_types:
        if "header" not in omit:
            files[f"op_api/include/aclnn_{snake(op)}.h"] = b"/* aclnn */\n"
        files[f"{TBE}/{name}_impl/dynamic/{snake(op)}.cpp"] = b"// kernel source\n"
    if compiler is not None and "version" not in omit:
        files["version.info"] = f"custom_opp_compiler_version={compiler}".encode()  # no newline, as real
    for rel, data in files.items():
        target = vendor_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if "tiling" not in omit:
        link = vendor_dir / TBE / "op_tiling" / "liboptiling.so"
        link.symlink_to(f"lib/linux/{arch}/libcust_opmaster_rt2.0.so")
    return vendor_dir


def make_package(
    work: Path,
    canary: Path,
    *,
    vendors: Mapping[str, Mapping[str, object]] = {"customize": {}},  # noqa: B006 - read only
    mtime: Optional[int] = None,
    out_name: str = "custom_opp_ubuntu_aarch64.run",
    install_sh: Optional[str] = None,
) -> Path:
    """Build ``work/<out_name>`` from a fresh tree in ``work/build``; returns the package.
    ``install_sh``: the install.sh template (``{canary}`` is filled in; default INSTALL_SH, read at
    the call, so a test may patch it)."""
    assert MAKESELF is not None
    src = work / "build"
    src.mkdir(parents=True)
    (src / "install.sh").write_text((install_sh or INSTALL_SH).format(canary=canary))
    (src / "install.sh").chmod(0o755)
    (src / "upgrade.sh").write_text("#!/bin/sh\nexit 0\n")
    (src / "help.info").write_text(HELP_INFO)
    for name, options in vendors.items():
        vendor_tree(src / "packages" / "vendors" / name, name=name, **options)  # type: ignore[arg-type]
    if mtime is not None:
        for path in [src, *src.rglob("*")]:
            os.utime(path, (mtime, mtime), follow_symlinks=False)
    out = work / out_name
    subprocess.run(
        [MAKESELF, "--help-header", "./help.info", "--gzip", "--complevel", "4", "--nomd5", "--sha256"]
        + ["./", str(out), "version:1.0", "./install.sh"],
        cwd=src,
        check=True,
        capture_output=True,
    )
    return out


DEBIAN_UNKNOWN_FLAG = """    -*)
\techo Unrecognized flag : "$1" >&2
\tMS_Help
\texit 1
\t;;
"""
# Huawei's modified makeself header (2022.3.19, "Modified the MS_Help function and some
# options"; a copy: github:mindspore-ai/mindspore .../custom_compiler/cmake/util/makeself/
# makeself-header.sh) appends every option it does not know to the script's arguments, which is
# how `pkg.run --install-path=DIR` reaches install.sh. Debian's header refuses them unless they
# come after "--". The same number of lines keeps the header's line count (skip) right.
CANN_UNKNOWN_FLAG = """    -*)
\tscriptargs="$scriptargs '$1'"
\tshift
\t: unknown options go to the script, as in CANN packages
\t;;
"""


def cann_header(package: Path) -> Path:
    """Give a Debian-made package CANN's handling of unknown options (in place)."""
    data = package.read_bytes()
    head, sep, payload = data.partition(b"\n" + DEBIAN_UNKNOWN_FLAG.encode())
    assert sep, "the makeself header has no Unrecognized flag case"
    package.write_bytes(head + b"\n" + CANN_UNKNOWN_FLAG.encode() + payload)
    return package


def small_package(
    work: Path, *flags: str, source: str = "src", install: str = "#!/bin/sh\necho ok > installed.txt\n"
) -> Path:
    """``work/<source>.run``: a directory ``work/<source>`` holding a.txt and the given
    install.sh, packed by makeself with ``flags`` (e.g. --current, --nocrc) from inside it, or
    from ``work`` as a named directory when "--named" is among the flags."""
    assert MAKESELF is not None
    src = work / source
    src.mkdir(parents=True, exist_ok=True)
    (src / "a.txt").write_text("hi\n")
    (src / "install.sh").write_text(install)
    (src / "install.sh").chmod(0o755)
    out = work / f"{source}.run"
    named = "--named" in flags
    argv = [MAKESELF, *(f for f in flags if f != "--named"), source if named else "./", str(out)]
    subprocess.run(
        [*argv, f"{source} package", "./install.sh"], cwd=work if named else src, check=True, capture_output=True
    )
    return out


def stored_npu_build(
    st: store.Store, key: str, work: Path, install_sh: Optional[str] = None, **vendor: object
) -> store.Entry:
    """An npu build of add_custom in the store ``st``: a package of one vendor, customize, built
    in ``work`` (``vendor``: vendor_tree's options; ``install_sh``: make_package's), with CANN's
    option handling (``cann_header``). Returns the store entry."""
    from tests.test_store import add_entry

    package = cann_header(make_package(work, work / "canary", vendors={"customize": vendor}, install_sh=install_sh))
    return add_entry(st, "add_custom", key, target="npu", outputs={package.name: package.read_bytes()})
