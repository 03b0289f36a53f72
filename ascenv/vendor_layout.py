"""What a custom operator vendor tree holds, read from its file names and a few small files.

The same reading serves a package (members of its ``packages/vendors/<vendor>/``) and an installed
vendor directory (``<root>/vendors/<vendor>/``): the installer copies the tree as is. Layout of an
msopgen project's package (CANN operator project template, scripts/install.sh and
cmake/func.cmake; a real listing: custom_opp_ubuntu_aarch64.run of a CANN 8.0.RC3 build):

    op_proto/lib/linux/<arch>/libcust_opsproto_rt2.0.so        graph (ATC) prototypes
    op_impl/ai_core/tbe/config/<unit>/aic-<unit>-ops-info.json  OpTypes ATC may place on <unit>
    op_impl/ai_core/tbe/op_tiling/lib/linux/<arch>/libcust_opmaster_rt2.0.so   tiling
    op_impl/ai_core/tbe/kernel/<unit>/<op_file>/<OpType>_<hash>.{o,json}       kernel binaries
    op_impl/ai_core/tbe/kernel/config/<unit>/{binary_info_config,<op_file>}.json
    op_api/include/aclnn_<op_file>.h, op_api/lib/libcust_opapi.so              aclnn (torch_npu)
    version.info                                                custom_opp_compiler_version=...
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Optional

from ascenv import elf

TBE = "op_impl/ai_core/tbe"
PROTO_LIB = "libcust_opsproto_rt2.0.so"
TILING_LIB = "libcust_opmaster_rt2.0.so"
OPAPI_LIB = "op_api/lib/libcust_opapi.so"
_OPS_INFO = re.compile(rf"^{TBE}/config/([^/]+)/aic-([^/]+)-ops-info\.json$")
_KERNEL_CONFIG = re.compile(rf"^{TBE}/kernel/config/([^/]+)/([^/]+)\.json$")
_KERNEL_BINARY = re.compile(rf"^{TBE}/kernel/([^/]+)/([^/]+)/[^/]+\.o$")
_PROTO = re.compile(rf"^op_proto/lib/linux/([^/]+)/{re.escape(PROTO_LIB)}$")
_TILING = re.compile(rf"^{TBE}/op_tiling/lib/linux/([^/]+)/{re.escape(TILING_LIB)}$")
_ACLNN = re.compile(r"^op_api/include/(aclnn_[^/]+\.h)$")
_HASH_SUFFIX = re.compile(r"_[0-9a-f]{32}(?:_[a-z_]+)?$")

ELF_HEAD = elf.HEAD  # bytes of a library enough for its class, byte order and e_machine
WHOLE = -1  # wanted(): the whole file
Reader = Callable[[str], Optional[bytes]]  # vendor-relative path -> its bytes (or ELF head), None if unknown


@dataclass(frozen=True)
class Library:
    kind: str  # proto, tiling, opapi
    path: str  # vendor-relative
    dir_arch: Optional[str]  # from lib/linux/<arch>/; None for op_api/lib
    elf_arch: Optional[str]  # from the ELF header; None when it is not an ELF file


@dataclass(frozen=True)
class VendorLayout:
    name: str
    op_types: tuple[str, ...]
    ops_info: dict[str, tuple[str, ...]]  # compute unit -> OpTypes in aic-<unit>-ops-info.json
    kernel_ops: dict[str, tuple[str, ...]]  # compute unit -> OpTypes in kernel/config/<unit>/*.json
    kernel_binaries: dict[str, int]  # compute unit -> number of .o files
    libraries: tuple[Library, ...]
    aclnn_headers: tuple[str, ...]
    compiler_version: Optional[str]
    problems: tuple[str, ...] = field(default=())  # files that could not be read as expected

    @property
    def compute_units(self) -> tuple[str, ...]:
        """Units with kernel binaries."""
        return tuple(sorted(u for u, n in self.kernel_binaries.items() if n))

    def libraries_of(self, kind: str) -> tuple[Library, ...]:
        return tuple(lib for lib in self.libraries if lib.kind == kind)


def snake_case(op_type: str) -> str:
    """AddCustom -> add_custom: the op file and aclnn header name opbuild derives."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])", r"_\1\2", op_type).lower()


def describe(name: str, paths: Iterable[str], read: Reader) -> VendorLayout:
    ops_info: dict[str, set[str]] = {}
    kernel_ops: dict[str, set[str]] = {}
    binaries: dict[str, int] = {}
    libraries: list[Library] = []
    headers: list[str] = []
    problems: list[str] = []
    for path in sorted(paths):
        if m := _OPS_INFO.match(path):
            ops_info.setdefault(m.group(1), set()).update(_json_keys(path, read, problems))
        elif m := _KERNEL_CONFIG.match(path):
            kernel_ops.setdefault(m.group(1), set()).update(_kernel_config_ops(path, m.group(2), read, problems))
        elif m := _KERNEL_BINARY.match(path):
            if m.group(1) != "config":
                binaries[m.group(1)] = binaries.get(m.group(1), 0) + 1
        elif m := _PROTO.match(path):
            libraries.append(Library("proto", path, m.group(1), elf.machine(read(path))))
        elif m := _TILING.match(path):
            libraries.append(Library("tiling", path, m.group(1), elf.machine(read(path))))
        elif path == OPAPI_LIB:
            libraries.append(Library("opapi", path, None, elf.machine(read(path))))
        elif m := _ACLNN.match(path):
            headers.append(m.group(1))
    version = read("version.info")
    compiler = None
    if version is not None:
        for line in version.decode("utf-8", "replace").splitlines():
            # CANN matches the line by substring (plugin_manager.cc, IsVendorVersionValid)
            if "compiler_version=" in line:
                compiler = line.split("=", 1)[1].strip()
                break
    op_types = set().union(*ops_info.values(), *kernel_ops.values()) if (ops_info or kernel_ops) else set()
    return VendorLayout(
        name=name,
        op_types=tuple(sorted(op_types)),
        ops_info={u: tuple(sorted(v)) for u, v in sorted(ops_info.items())},
        kernel_ops={u: tuple(sorted(v)) for u, v in sorted(kernel_ops.items())},
        kernel_binaries=dict(sorted(binaries.items())),
        libraries=tuple(libraries),
        aclnn_headers=tuple(headers),
        compiler_version=compiler,
        problems=tuple(problems),
    )


def wanted(path: str) -> int:
    """How much of a vendor-relative file ``describe`` reads: WHOLE (JSON it interprets and
    version.info), ELF_HEAD (a library), 0 (the rest: kernels, sources, kernel JSON)."""
    if path == "version.info" or _OPS_INFO.match(path) or _KERNEL_CONFIG.match(path):
        return WHOLE
    if _PROTO.match(path) or _TILING.match(path) or path == OPAPI_LIB:
        return ELF_HEAD
    return 0


def _text(value: str) -> str:
    """A JSON string may hold a lone surrogate ("\\ud800"), which no UTF-8 output accepts:
    shown as its escape instead."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _load(path: str, read: Reader, problems: list[str]) -> object:
    data = read(path)
    if data is None:
        problems.append(f"{path}: not read (too large or unreadable)")
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than the parser goes
        reason = "nested too deeply" if isinstance(exc, RecursionError) else _text(str(exc))[:200]
        problems.append(f"{path}: not JSON ({reason})")
        return None


def _json_keys(path: str, read: Reader, problems: list[str]) -> set[str]:
    """aic-<unit>-ops-info.json maps each OpType to its inputs, outputs and opFile."""
    data = _load(path, read, problems)
    if data is None:
        return set()
    if not isinstance(data, dict):
        problems.append(f"{path}: a JSON {type(data).__name__}, not an object of OpTypes")
        return set()
    return {_text(k) for k, v in data.items() if isinstance(v, dict)}


def _kernel_config_ops(path: str, stem: str, read: Reader, problems: list[str]) -> set[str]:
    """binary_info_config.json maps OpType -> binary list; <op_file>.json has a binList whose
    simplifiedKey entries start with the OpType ("Abs/d=0,p=0/27,2/27,2"). Every level is
    type-checked: any other shape is a problem of this file, never an error of the whole read."""
    data = _load(path, read, problems)
    if data is None:
        return set()
    if not isinstance(data, dict):
        problems.append(f"{path}: a JSON {type(data).__name__}, not an object")
        return set()
    if stem == "binary_info_config":
        return {_text(k) for k, v in data.items() if isinstance(v, dict)}
    entries = data.get("binList", [])
    if not isinstance(entries, list):
        problems.append(f"{path}: binList is a JSON {type(entries).__name__}, not a list")
        return set()
    found: set[str] = set()
    skipped = 0
    for entry in entries:
        op = _op_of_entry(entry) if isinstance(entry, dict) else None
        if op is not None:
            found.add(_text(op))
        elif not isinstance(entry, dict) or "simplifiedKey" in entry or "binInfo" in entry:
            skipped += 1  # an entry of another shape than CANN writes
    if skipped:
        problems.append(f"{path}: {skipped} binList entr{'y names' if skipped == 1 else 'ies name'} no OpType")
    return found


def _op_of_entry(entry: dict[str, object]) -> Optional[str]:
    """The OpType of one binList entry: its simplifiedKey's first part, else its binInfo's
    jsonFilePath without the directory, the hash and the suffix."""
    keys = entry.get("simplifiedKey")
    if isinstance(keys, list) and keys and isinstance(keys[0], str):
        return keys[0].split("/", 1)[0]
    info = entry.get("binInfo")
    json_path = info.get("jsonFilePath") if isinstance(info, dict) else None
    if isinstance(json_path, str):
        return _HASH_SUFFIX.sub("", json_path.rsplit("/", 1)[-1].removesuffix(".json"))
    return None
