"""The lock: the whole Ascend stack of one machine written down, read back, and compared.

Nothing here reads the machine, the clock or the environment. ``lock_from_snapshot`` turns
a ``Snapshot`` into a ``Lock``; ``dumps_lock``/``loads_lock`` are the TOML form and
``read_lock``/``write_lock`` the file; ``drift`` compares two locks layer by layer. Shaped after
packaging's ``pylock.py`` (frozen dataclasses, kebab-case keys, a format-version gate, validation
errors that name the key path) and conda-lock's content hash, hashed over a small canonical
*versioned* serialisation because "anything that modifies the content hash is a breaking change"
(conda-lock ``conda_lock/content_hash.py``): a change of ``HASH_ALGORITHM`` must bump the lock major version.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Union

from ascenv import errors, fsutil, serde
from ascenv.model import Severity, Snapshot, normalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

LOCK_VERSION = "1.1"  # 1.1 added [[stack]]; MAJOR.MINOR: a reader refuses another major, warns on a newer minor
HASH_ALGORITHM = "ascenv-lock-hash/1"  # the prefix hashed with the stack; see input_hash()
GENERATOR = "ascenv"
LAYERS = (
    "platform",
    "driver",
    "firmware",
    "chips",
    "cann",
    "kernels",
    "python",
    "packages",
    "vendors",
    "stack",
    "images",
)


# --- the model ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Platform:
    arch: Optional[str] = None  # uname -m
    os: Optional[str] = None  # os-release ID and VERSION_ID, "ubuntu 22.04"
    glibc: Optional[str] = None
    chip: Optional[str] = None  # npu-smi Name column ("910B4-1", "Ascend910", "310P3"); mixed: "a,b"
    compute_unit: Optional[str] = None  # the SoC family CANN builds kernels for ("ascend910b")


@dataclass(frozen=True)
class LockedChip:
    npu: int
    chip: int
    name: str


@dataclass(frozen=True)
class Npu:
    driver: Optional[str] = None
    firmware: Optional[str] = None
    chips: tuple[LockedChip, ...] = ()


@dataclass(frozen=True)
class LockedCann:
    path: str
    kind: str
    version: Optional[str] = None
    innerversion: Optional[str] = None
    arch: Optional[str] = None
    active: bool = False
    kernels: tuple[str, ...] = ()  # compute units with kernels/ops packages installed


@dataclass(frozen=True)
class LockedPackage:
    name: str  # PEP 503 normalised
    version: str
    record_hash: Optional[str] = None  # sha256 over the installed files' RECORD, when readable


@dataclass(frozen=True)
class Python:
    version: Optional[str] = None
    implementation: Optional[str] = None
    packages: tuple[LockedPackage, ...] = ()


@dataclass(frozen=True)
class LockedVendor:
    name: str
    path: str
    priority: int
    version_info: dict[str, str] = field(default_factory=dict)  # the vendor's version.info, raw
    compute_units: tuple[str, ...] = ()
    manifest_digest: Optional[str] = None  # digest of the ascenv build manifest beside it


@dataclass(frozen=True)
class LockedPart:
    """A part of the layer above torch_npu (``model.StackPart``): NNAL/ATB, MindIE, triton-ascend,
    vllm-ascend, vllm, sglang."""

    name: str
    version: Optional[str] = None
    path: str = ""
    build: Optional[str] = None
    abi: Optional[str] = None  # ATB: the C++ ABI build selected, else the ones installed


@dataclass(frozen=True)
class LockedImage:
    name: str
    ref: Optional[str] = None  # the human tag
    digest: Optional[str] = None  # image ID (bootstrap) or repo digest (registry), from containers/pins.toml


@dataclass(frozen=True)
class Lock:
    lock_version: str = LOCK_VERSION
    generator: str = GENERATOR
    generator_version: str = ""
    created: str = ""  # ISO 8601 UTC, of the snapshot the lock was made from
    source: str = ""  # the host name or the snapshot file it was made from
    input_hash: str = ""
    platform: Platform = Platform()
    npu: Npu = Npu()
    cann: tuple[LockedCann, ...] = ()
    python: Python = Python()
    vendors: tuple[LockedVendor, ...] = ()
    images: tuple[LockedImage, ...] = ()
    stack: tuple[LockedPart, ...] = ()  # lock 1.1


STACK_FIELDS = ("platform", "npu", "cann", "python", "vendors", "images", "stack")  # what the hash covers
# Tables a minor version added: hashed only when not empty, so a lock of an older minor (which
# has none) keeps its hash and a machine without the layer hashes as before.
ADDED_FIELDS = ("stack",)


# --- snapshot -> lock ----------------------------------------------------------------------------


def lock_from_snapshot(
    snap: Snapshot, *, generator_version: str, source: str = "", images: Iterable[LockedImage] = ()
) -> Lock:
    """The lock of the machine ``snap`` describes; lists are sorted so equal stacks hash equal."""
    names = sorted({c.name for c in snap.npu.chips if c.name})
    host = snap.host
    os_name = " ".join(p for p in (host.os_id, host.os_version) if p) or None
    # an unpacked root (--root) has no uname: its CANN's arch (install.info arch=) says it
    active = next((i for i in snap.cann.installs if i.path == snap.cann.active), None)
    cann_arch = (active.arch if active else None) or next((i.arch for i in snap.cann.installs if i.arch), None)
    platform = Platform(
        arch=host.arch or cann_arch,
        os=os_name,
        glibc=host.glibc,
        chip=",".join(names) or None,
        # an unknown chip name stands for its own family, so two unknown chips still compare
        compute_unit=",".join(sorted({compute_unit(n) or n for n in names})) or None,
    )
    firmware = snap.firmware.version or next((b.firmware_version for b in snap.npu.boards if b.firmware_version), None)
    npu = Npu(
        driver=snap.driver.version or snap.npu.driver_version,
        firmware=firmware,
        chips=tuple(
            sorted((LockedChip(c.npu, c.chip, c.name or "?") for c in snap.npu.chips), key=lambda c: (c.npu, c.chip))
        ),
    )
    cann = tuple(
        LockedCann(
            path=i.path,
            kind=i.kind,
            version=i.version,
            innerversion=i.innerversion,
            arch=i.arch,
            active=i.path == snap.cann.active,
            kernels=tuple(sorted(i.kernels)),
        )
        for i in sorted(snap.cann.installs, key=lambda i: i.path)
    )
    packages: dict[str, LockedPackage] = {}
    for dist in snap.python.distributions:  # the first on sys.path wins, as at import time
        name = normalize_name(dist.name)
        packages.setdefault(name, LockedPackage(name, dist.version, dist.record_hash))
    python = Python(
        version=snap.python.version,
        implementation=snap.python.implementation,
        packages=tuple(packages[n] for n in sorted(packages)),
    )
    vendors = tuple(
        LockedVendor(
            name=v.name,
            path=v.path,
            priority=v.priority,
            version_info=dict(sorted(v.version_info.items())),
            compute_units=tuple(sorted(v.compute_units)),
            manifest_digest=v.manifest_digest,
        )
        for v in sorted(snap.vendors, key=lambda v: (v.priority, v.name))
        if v.exists
    )
    stack = tuple(
        LockedPart(
            name=p.name,
            version=p.version,
            path=p.path,
            build=p.build,
            abi=p.abi_selected or (",".join(p.abi_variants) or None),
        )
        for p in sorted(snap.stack, key=lambda p: (p.name, p.path))
    )
    lock = Lock(
        generator_version=generator_version,
        created=snap.created,
        source=source or snap.host.hostname or "",
        platform=platform,
        npu=npu,
        cann=cann,
        python=python,
        vendors=vendors,
        images=tuple(sorted(images, key=lambda i: i.name)),
        stack=stack,
    )
    return replace(lock, input_hash=input_hash(lock))


# The SoC family of an npu-smi chip name. The compute unit is the lower-cased Short_SoC_version of
# CANN's platform_config/<SoC>.ini, the same grouping as msopgen's config/transform.json
# SOC_VERSION_TYPE (CANN 8.1.RC1,
# github:leideng/CANN-8.1.RC1@551ed27c29284929bbdc2239e929ddfedfdf0b8b:Ascend/ascend-toolkit/8.1.RC1/).
# A test holds it equal to compat/hardware.toml, which is not loaded here: that costs more than the lock.
# npu-smi prints the A3 name *with* the "Ascend" prefix ("Ascend910"), every other family without,
# and a bare "910B" is the first-generation 910 bin (family ascend910), not a 910B1..B4
# (https://github.com/vllm-project/vllm-ascend/issues/573).
_COMPUTE_UNITS = (
    (r"Ascend910(_93\d*)?", "ascend910_93"),
    (r"(Ascend)?910_93\d*", "ascend910_93"),
    (r"(Ascend)?910B\d.*", "ascend910b"),
    (r"(Ascend)?910(A|B|ProA|ProB|PremiumA)?", "ascend910"),
    (r"(Ascend)?310P\d*", "ascend310p"),
    (r"(Ascend)?310B\d*", "ascend310b"),
    (r"(Ascend)?310", "ascend310"),
    (r"(Ascend)?950.*", "ascend950"),
)


def compute_unit(chip_name: str) -> Optional[str]:
    """``910B4-1`` -> ``ascend910b``, ``Ascend910`` (A3) -> ``ascend910_93``; None if unknown."""
    for pattern, unit in _COMPUTE_UNITS:
        if re.fullmatch(pattern, chip_name.strip(), re.IGNORECASE):
            return unit
    return None


# --- hashing and TOML ------------------------------------------------------------------------------


def lock_data(lock: Lock) -> dict:
    """The lock as TOML-ready data: kebab-case keys, no None (TOML has no null)."""
    return _drop_none(serde.to_data(lock, key=serde.kebab))


def _drop_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _drop_none(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_drop_none(v) for v in data]
    return data


def input_hash(lock: Lock) -> str:
    """sha256 of ``HASH_ALGORITHM`` + newline + the stack tables as compact JSON with sorted keys.

    Covers only what is installed (STACK_FIELDS), not when or by which ascenv it was written.
    Pinned by a golden test: changing it is a breaking change (bump LOCK_VERSION's major)."""
    tables = sorted(
        (serde.kebab(name), getattr(lock, name))
        for name in STACK_FIELDS
        if name not in ADDED_FIELDS or getattr(lock, name)
    )
    text = "{" + ",".join(f'"{key}":{_table_json(value)}' for key, value in tables) + "}"
    return "sha256:" + hashlib.sha256(f"{HASH_ALGORITHM}\n{text}".encode()).hexdigest()


def _table_json(value: Any) -> str:
    """One stack table as canonical JSON; equal tables of a fleet's nodes are serialised once."""
    try:
        return _table_json_cached(value)
    except TypeError:  # unhashable (a vendor's version.info dict)
        return _canonical_json(value)


def _canonical_json(value: Any) -> str:
    return json.dumps(
        _drop_none(serde.to_data(value, key=serde.kebab)), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


_table_json_cached = functools.lru_cache(maxsize=512)(_canonical_json)


_HEADER = (
    "# This file is generated by `ascenv lock`; do not edit it by hand (its input-hash would no\n"
    "# longer match). Check a machine against it with `ascenv lock --check`.\n"
)


def dumps_lock(lock: Lock) -> str:
    import tomli_w

    return _HEADER + tomli_w.dumps(lock_data(lock))


def _not_toml(text: str, source: str, regenerate: str, exc: ValueError) -> errors.InputError:
    """What a file that is not TOML is, when it is one of ascenv's other files: a snapshot
    (JSON with ``npu`` and ``python``) is the commonest thing passed to ``--check`` by mistake."""
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and {"npu", "python", "schema"} <= data.keys():
            return errors.InputError(
                f"{source} is a snapshot (JSON), not a lock",
                hint=f"write its lock with `ascenv lock --from {source} -o ascenv.lock` and check against that,"
                f" or compare machines with `ascenv diff {source} OTHER`",
            )
        if data is not None:
            return errors.InputError(f"{source} is JSON, not a lock (a lock is TOML)", hint=regenerate)
    return errors.InputError(f"{source} is not a readable lock (truncated or not TOML): {exc}", hint=regenerate)


def loads_lock(text: str, source: str) -> tuple[Lock, list[str]]:
    """Parse and validate a lock; returns it with warnings. Every problem is an InputError (exit 2)
    naming ``source`` and, for a bad value, the key path (``npu.chips[3].name: expected string``)."""
    regenerate = "regenerate it with `ascenv lock` (or `ascenv lock --from SNAPSHOT`)"
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise errors.InputError(f"{source} is not an ascenv lock (TOML nested too deep)", hint=regenerate) from None
    except ValueError as exc:  # TOMLDecodeError, or an integer longer than Python reads (sys.int_info)
        raise _not_toml(text, source, regenerate, exc) from None
    warnings: list[str] = []
    version = data.get("lock-version")
    match = re.fullmatch(r"(\d{1,9})\.(\d{1,9})", version) if isinstance(version, str) else None
    if match is None:
        raise errors.InputError(
            f'{source}: lock-version: expected a "MAJOR.MINOR" string, found {version!r}; is this an ascenv lock?',
            hint=regenerate,
        )
    major, minor = int(match[1]), int(match[2])
    ours_major, ours_minor = (int(p) for p in LOCK_VERSION.split("."))
    if major != ours_major:
        newer = major > ours_major
        raise errors.InputError(
            f"{source} has lock format {version}, this ascenv {'only ' if newer else ''}reads {ours_major}.x"
            + (" (it was written by a newer ascenv)" if newer else ""),
            hint="upgrade ascenv to read it" if newer else regenerate,
        )
    pruned: list[str] = []
    if minor > ours_minor:
        warnings.append(
            f"{source} has lock format {version}, newer than this ascenv's {LOCK_VERSION}:"
            " keys it does not know are ignored"
        )
        data = _prune_unknown(Lock, data, "", pruned)
        warnings.extend(f"{source}: ignored unknown key {path}" for path in pruned)
    try:
        lock = serde.from_data(Lock, data, key=serde.kebab)
    except errors.SchemaError as exc:
        raise errors.InputError(f"{source}: {exc}", hint=regenerate) from None
    # A key a newer ascenv added outside the stack tables is not hashed: the hash is checked as
    # always. One inside them was hashed by its writer and cannot be recomputed here: the hash is
    # then not trusted (recorded as empty, so `check` compares every layer), never skipped.
    hashed = {serde.kebab(name) for name in STACK_FIELDS}
    unverifiable = [p for p in pruned if re.split(r"[.\[]", p, maxsplit=1)[0] in hashed]
    if unverifiable:
        warnings.append(
            f"{source}: input-hash not verified (it covers keys this ascenv does not know): every layer is compared"
        )
        lock = replace(lock, input_hash="")
    elif lock.input_hash != input_hash(lock):
        raise errors.InputError(
            f"{source}: input-hash does not match the locked content: the lock was edited by hand or is damaged",
            hint="change the machine, not the lock; then " + regenerate,
        )
    return lock, warnings


def read_lock(path: Union[str, os.PathLike[str]], shown: str) -> tuple[Lock, list[str]]:
    """The lock saved at ``path`` and its warnings; messages call it ``shown`` (the name as the
    user gave it). A FIFO, a device or a file above fsutil.INPUT_LIMIT is refused unread."""
    hint = "write one with `ascenv lock -o FILE`"
    raw = fsutil.read_input(path, what="lock", shown=shown, hint=hint)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.InputError(f"{shown} is not a lock (not UTF-8 text)", hint=hint) from None
    return loads_lock(text, shown)


def write_lock(path: Union[str, os.PathLike[str]], lock: Lock, shown: str) -> None:
    """Atomically (a temp file renamed over the target): a reader never sees half a lock; 0644
    (narrowed by the umask), a lock is meant to be committed and shared."""
    try:
        fsutil.write_atomic(path, dumps_lock(lock), mode=0o644)
    except OSError as exc:
        raise errors.UsageError(
            f"cannot write {shown}: {exc.strerror or exc}", hint="-o takes a file path in a writable directory"
        ) from None


def pinned_images() -> tuple[LockedImage, ...]:
    """The project's image pins (containers/pins.toml, written by `ascenv image pin`); none while
    the container module is not part of this ascenv."""
    try:
        from ascenv.containers.pins import PINS_FILE, load_pins
    except ImportError:
        return ()
    from ascenv import paths

    pins = load_pins(paths.data_dir("containers") / PINS_FILE)
    return tuple(LockedImage(name, ref=pin.tag or pin.ref, digest=pin.digest) for name, pin in sorted(pins.items()))


def _prune_unknown(cls: Any, data: Any, path: str, pruned: list[str]) -> Any:
    """Drop keys a newer minor version added (recorded in ``pruned``); the rest is validated later."""
    import dataclasses
    import typing

    if typing.get_origin(cls) is typing.Union:
        cls = next(a for a in typing.get_args(cls) if a is not type(None))
    if typing.get_origin(cls) is tuple and isinstance(data, list):
        item = typing.get_args(cls)[0]
        return [_prune_unknown(item, v, f"{path}[{i}]", pruned) for i, v in enumerate(data)]
    if dataclasses.is_dataclass(cls) and isinstance(data, dict):
        hints = typing.get_type_hints(cls)
        known = {serde.kebab(f.name): f.name for f in dataclasses.fields(cls)}
        kept = {}
        for key, value in data.items():
            where = f"{path}.{key}" if path else key
            if key in known:
                kept[key] = _prune_unknown(hints[known[key]], value, where, pruned)
            else:
                pruned.append(where)
        return kept
    return data


# --- drift -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One difference between two stacks: ``old`` (the lock, or input A) -> ``new``."""

    layer: str  # one of LAYERS
    item: str  # what changed inside the layer: "version", "torch-npu", "<cann path>: version", ...
    kind: str  # "changed", "added", "removed"
    old: Optional[str]
    new: Optional[str]
    severity: Severity


def flatten(lock: Lock) -> dict[tuple[str, str], str]:
    """Every locked fact as (layer, item) -> value: the common ground of check, diff and fleet."""
    flat: dict[tuple[str, str], Optional[str]] = {}
    p = lock.platform
    for name in ("arch", "os", "glibc", "chip", "compute_unit"):
        flat[("platform", serde.kebab(name))] = getattr(p, name)
    flat[("driver", "version")] = lock.npu.driver
    flat[("firmware", "version")] = lock.npu.firmware
    for name in sorted({c.name for c in lock.npu.chips}):  # a lost card shows as a lower count
        flat[("chips", name)] = str(sum(1 for c in lock.npu.chips if c.name == name))
    for inst in lock.cann:
        details = ", ".join(x for x in (inst.innerversion, inst.kind, inst.arch) if x)
        flat[("cann", inst.path)] = f"{inst.version or '?'} ({details})"
        flat[("kernels", inst.path)] = ", ".join(inst.kernels) or "none"
    flat[("cann", "active")] = next((i.path for i in lock.cann if i.active), None)
    flat[("python", "version")] = lock.python.version
    flat[("python", "implementation")] = lock.python.implementation
    for pkg in lock.python.packages:
        flat[("packages", pkg.name)] = pkg.version
        flat[("packages", f"{pkg.name}: record-hash")] = pkg.record_hash
    for v in lock.vendors:
        flat[("vendors", f"{v.name}: path")] = v.path
        for key, value in v.version_info.items():
            flat[("vendors", f"{v.name}: version.info {key}")] = value
        flat[("vendors", f"{v.name}: compute units")] = ", ".join(v.compute_units) or "none"
        flat[("vendors", f"{v.name}: manifest-digest")] = v.manifest_digest
    flat[("vendors", "load order")] = ", ".join(v.name for v in lock.vendors) or None
    for part in lock.stack:
        where = part.name if sum(1 for p in lock.stack if p.name == part.name) == 1 else f"{part.name} {part.path}"
        flat[("stack", where)] = part.version or "?"
        flat[("stack", f"{where}: build")] = part.build
        flat[("stack", f"{where}: abi")] = part.abi
    for image in lock.images:
        flat[("images", image.name)] = image.digest or image.ref
    return {k: v for k, v in flat.items() if v is not None}


def drift(old: Lock, new: Lock, *, strict: bool = False) -> tuple[Change, ...]:
    """Layer-by-layer differences from ``old`` to ``new``, in LAYERS order."""
    a, b = flatten(old), flatten(new)
    changes = []
    for key in sorted(a.keys() | b.keys(), key=lambda k: (LAYERS.index(k[0]), k[1])):
        before, after = a.get(key), b.get(key)
        if before == after:
            continue
        kind = "added" if before is None else "removed" if after is None else "changed"
        severity = _severity(key[0], key[1], kind, before, after)
        if strict and severity is Severity.WARN:
            severity = Severity.ERROR
        changes.append(Change(key[0], key[1], kind, before, after, severity))
    return tuple(changes)


def _severity(layer: str, item: str, kind: str, old: Optional[str], new: Optional[str]) -> Severity:
    """Driver, firmware, CANN, kernels, vendors, images and other-platform changes break builds and
    runs: errors. A patch release (same major.minor) of Python or of a package, a reinstall with
    the same version, an added package, the OS or glibc release and chip count: warnings."""
    if layer == "platform":
        return Severity.WARN if item in ("os", "glibc") else Severity.ERROR
    if layer == "chips":
        return Severity.WARN
    if layer in ("python", "packages"):
        if item.endswith(": record-hash") or kind == "added":
            return Severity.WARN
        is_version = item == "version" if layer == "python" else ":" not in item
        if kind == "changed" and is_version:
            return Severity.WARN if _same_minor(old, new) else Severity.ERROR
        return Severity.ERROR
    return Severity.ERROR


def _same_minor(old: Optional[str], new: Optional[str]) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        a, b = Version(old or ""), Version(new or "")
    except InvalidVersion:
        return False
    return (a.release + (0, 0))[:2] == (b.release + (0, 0))[:2] and a.epoch == b.epoch


def different_platform(lock: Platform, machine: Platform) -> Optional[str]:
    """Why ``machine`` cannot be checked against ``lock`` (another arch or SoC family), or None.
    Unknown on either side is not a mismatch: a container without devices has no chips."""
    reasons = []
    if lock.arch and machine.arch and lock.arch != machine.arch:
        reasons.append(f"arch {lock.arch} vs {machine.arch}")
    if lock.compute_unit and machine.compute_unit and lock.compute_unit != machine.compute_unit:
        reasons.append(f"SoC family {lock.compute_unit} ({lock.chip}) vs {machine.compute_unit} ({machine.chip})")
    return "; ".join(reasons) or None


@dataclass(frozen=True)
class LockCheck:
    """`lock --check`: the lock read from ``source``, the machine's lock and the drift between."""

    source: str
    lock: Lock
    machine: Lock
    changes: tuple[Change, ...]
    warnings: tuple[str, ...] = ()

    @property
    def in_sync(self) -> bool:
        return not self.changes

    @property
    def exit_code(self) -> int:
        """1 on drift (an error-severity change), 0 in sync, warnings alone included."""
        return errors.EXIT_FINDINGS if any(c.severity is Severity.ERROR for c in self.changes) else errors.EXIT_OK


def check_lock(
    lock: Lock, machine: Lock, *, source: str, strict: bool = False, warnings: Iterable[str] = ()
) -> LockCheck:
    """``check`` as a result the renderer takes whole."""
    return LockCheck(source, lock, machine, check(lock, machine, strict=strict, source=source), tuple(warnings))


def check(lock: Lock, machine: Lock, *, strict: bool = False, source: str = "the lock") -> tuple[Change, ...]:
    """Drift from ``lock`` to ``machine`` (empty when in sync: equal verified input hashes, no
    comparison; a lock whose hash could not be verified has an empty one and is compared).
    Raises PlatformMismatch (exit 2) for another arch or SoC family rather than list false drift."""
    reason = different_platform(lock.platform, machine.platform)
    if reason:
        want = " ".join(p for p in (lock.platform.arch, lock.platform.compute_unit) if p)
        raise errors.PlatformMismatch(
            f"{source} is for another platform ({reason}): comparing it with this machine would only list false drift",
            hint=f"check it on a {want} machine, or write a lock for this one with `ascenv lock -o FILE`",
        )
    if lock.input_hash and lock.input_hash == machine.input_hash:
        return ()
    return drift(lock, machine, strict=strict)
