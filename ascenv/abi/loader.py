"""Where ld.so would find each DT_NEEDED library, modelled from files under a root.

The order is glibc's ``_dl_map_object`` (elf/dl-load.c) as ld.so(8) documents it:

1. a name with a slash is a path (after ``$ORIGIN``/``$LIB``/``$PLATFORM`` expansion);
2. DT_RPATH of the requesting object and then of the objects that loaded it, only when the
   requesting object has no DT_RUNPATH (an object with both has its DT_RPATH ignored);
3. LD_LIBRARY_PATH;
4. DT_RUNPATH of the requesting object only (not of its loaders);
5. ``/etc/ld.so.cache`` of the root (its entries for the name, in order), then the directories of
   ``/etc/ld.so.conf`` and its ``include`` files, which ldconfig reads to build the cache
   (ldconfig(8)): they stand in for a cache that is absent or older than the libraries;
6. the default directories: the multiarch pair of the machine (Debian), then ``/lib64``,
   ``/usr/lib64`` (64-bit, Red Hat layout), then ``/lib``, ``/usr/lib``.

A candidate of another class or machine is skipped and the search goes on, as ld.so does
(``open_verify``). Each start object loads breadth first with everything it needs before the next
one (successive ``dlopen`` calls), and a name already loaded (as a DT_NEEDED name or
a soname) or a file already loaded under another name is not searched again. ``$ORIGIN`` is the
directory of the path the object was found at; ``$LIB`` is ``lib64`` for 64-bit objects and
``lib`` otherwise (glibc's default; Debian's multiarch ld.so uses ``lib/<triplet>``, which step 6
covers); ``$PLATFORM`` is the machine name.
"""

from __future__ import annotations

import posixpath
import re
import struct
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from ascenv.elf import ElfFile

# Debian multiarch triplets (https://wiki.debian.org/Multiarch/Tuples)
TRIPLETS = {
    "x86_64": "x86_64-linux-gnu",
    "aarch64": "aarch64-linux-gnu",
    "i386": "i386-linux-gnu",
    "arm": "arm-linux-gnueabihf",
    "riscv64": "riscv64-linux-gnu",
    "ppc64": "powerpc64-linux-gnu",
}
_DST = re.compile(r"\$(?:\{(ORIGIN|LIB|PLATFORM)\}|(ORIGIN|LIB|PLATFORM)(?![A-Za-z0-9_]))")
_CONF = "/etc/ld.so.conf"


if TYPE_CHECKING:  # typing.Protocol is 3.8+; the probe also runs on a fleet node's Python 3.7
    from typing import Protocol

    class Files(Protocol):
        def elf(self, path: str) -> Optional[ElfFile]: ...
        def real(self, path: str) -> Optional[str]: ...
        def text(self, path: str) -> Optional[str]: ...
        def glob(self, directory: str, pattern: str) -> list[str]: ...
        def data(self, path: str) -> Optional[bytes]: ...


@dataclass(frozen=True)
class Loaded:
    path: str  # machine path it was found at
    elf: ElfFile
    found_via: str  # "start", "path", "RPATH", "LD_LIBRARY_PATH", "RUNPATH", "ld.so.conf", "default"
    needed_by: Optional[str]  # path of the object whose DT_NEEDED brought it in; None for a start object


@dataclass(frozen=True)
class Missing:
    name: str  # the DT_NEEDED entry
    needed_by: str
    searched: tuple[str, ...]  # directories, in the order tried
    wrong_machine: tuple[str, ...]  # files of that name skipped for another class or machine


@dataclass(frozen=True)
class LoadOrder:
    objects: tuple[Loaded, ...]  # breadth first, the symbol lookup order
    missing: tuple[Missing, ...]

    def by_path(self, path: str) -> Optional[Loaded]:
        return next((o for o in self.objects if o.path == path), None)


def conf_dirs(files: Files, path: str = _CONF, _seen: Optional[set[str]] = None) -> tuple[str, ...]:
    """Directories of ld.so.conf in order, ``include`` globs expanded (relative to /etc as ldconfig does)."""
    seen = set() if _seen is None else _seen
    if path in seen:
        return ()
    seen.add(path)
    text = files.text(path) or ""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("hwcap "):
            continue
        if line.startswith("include") and line[7:8].isspace():
            for pattern in line[8:].split():
                if not pattern.startswith("/"):
                    pattern = posixpath.join(posixpath.dirname(path), pattern)
                directory, base = posixpath.split(pattern)
                for included in files.glob(directory, base):
                    out += conf_dirs(files, included, seen)
            continue
        # a directory may carry "=TYPE" (old ldconfig) and lines may hold several, split by blanks, ':' or ','
        out += [d.split("=", 1)[0] for d in re.split(r"[\s:,]+", line) if d.startswith("/")]
    return tuple(dict.fromkeys(out))


# glibc's cache layout (sysdeps/generic/dl-cache.h, "glibc-ld.so.cache1.1", glibc >= 2.3; the only
# one written since 2.32): a 48-byte header, then entries of flags, key and value offsets (from the
# header's start), os version and hwcap (24 bytes), then the strings.
_CACHE_MAGIC = b"glibc-ld.so.cache1.1"
CACHE = "/etc/ld.so.cache"


def cache_entries(data: Optional[bytes]) -> dict[str, tuple[str, ...]]:
    """Soname -> paths of an ld.so.cache, in its order; empty when absent or not of the new format
    (an old-format part first is skipped: the new header follows it)."""
    start = data.find(_CACHE_MAGIC) if data else -1
    if data is None or start < 0 or len(data) < start + 48:
        return {}
    order = "<" if data[start + 28] != 3 else ">"  # flags: 2 little endian, 3 big endian
    (count,) = struct.unpack_from(order + "I", data, start + 20)
    out: dict[str, list[str]] = {}
    for i in range(min(count, (len(data) - start - 48) // 24)):
        _, key, value = struct.unpack_from(order + "iII", data, start + 48 + 24 * i)
        name, path = _cstr(data, start + key), _cstr(data, start + value)
        if name and path:
            out.setdefault(name, []).append(path)
    return {k: tuple(v) for k, v in out.items()}


def _cstr(data: bytes, at: int) -> Optional[str]:
    end = data.find(b"\0", at)
    return data[at:end].decode("utf-8", "surrogateescape") if 0 <= at < len(data) and end >= 0 else None


def default_dirs(machine: str, bits: int) -> tuple[str, ...]:
    triplet = TRIPLETS.get(machine)
    dirs = [f"/lib/{triplet}", f"/usr/lib/{triplet}"] if triplet else []
    if bits == 64:
        dirs += ["/lib64", "/usr/lib64"]
    return (*dirs, "/lib", "/usr/lib")


def expand(entry: str, origin: str, obj: ElfFile) -> str:
    values = {"ORIGIN": origin, "LIB": "lib64" if obj.bits == 64 else "lib", "PLATFORM": obj.machine}
    return _DST.sub(lambda m: values[m.group(1) or m.group(2)], entry)


def load(
    files: Files,
    starts: Sequence[str],
    *,
    ld_library_path: Sequence[str] = (),
    conf: Sequence[str] = (),
    cache: Optional[Mapping[str, Sequence[str]]] = None,
) -> LoadOrder:
    """The load order from ``starts`` (machine paths, e.g. the libraries a Python import opens)."""
    objects: list[Loaded] = []
    missing: list[Missing] = []
    names: dict[str, Loaded] = {}  # DT_NEEDED names and sonames already loaded
    reals: dict[str, Loaded] = {}
    queue: deque[Loaded] = deque()

    def add(path: str, obj: ElfFile, via: str, needed_by: Optional[str], name: str) -> Loaded:
        real = files.real(path) or path
        if real in reals:
            names[name] = reals[real]
            return reals[real]
        loaded = Loaded(path, obj, via, needed_by)
        objects.append(loaded)
        reals[real] = names[name] = loaded
        if obj.soname:
            names.setdefault(obj.soname, loaded)
        queue.append(loaded)
        return loaded

    by_path: dict[str, Loaded] = {}
    # one start after the other, each with all it needs, as successive dlopen() calls: `import
    # torch_npu` runs after `import torch` has loaded torch's libraries, whose sonames then
    # satisfy torch_npu's DT_NEEDED without a search
    for start in starts:
        obj = files.elf(start)
        if obj is None:
            continue
        add(start, obj, "start", None, start)
        while queue:
            current = queue.popleft()
            by_path[current.path] = current
            for name in current.elf.needed:
                if name in names:
                    continue
                found, searched, skipped = _search(files, current, name, by_path, ld_library_path, conf, cache or {})
                if found is None:
                    missing.append(Missing(name, current.path, searched, skipped))
                    continue
                path, obj, via = found
                add(path, obj, via, current.path, name)
    return LoadOrder(tuple(objects), tuple(missing))


def _search(
    files: Files,
    requester: Loaded,
    name: str,
    by_path: dict[str, Loaded],
    ld_library_path: Sequence[str],
    conf: Sequence[str],
    cache: Mapping[str, Sequence[str]],
) -> tuple[Optional[tuple[str, ElfFile, str]], tuple[str, ...], tuple[str, ...]]:
    me = requester.elf
    skipped: list[str] = []

    def fits(path: str) -> Optional[ElfFile]:
        obj = files.elf(path)
        if obj is None:
            return None
        if obj.machine != me.machine or obj.bits != me.bits:
            skipped.append(f"{path} ({obj.machine}, {obj.bits}-bit)")
            return None
        return obj

    if "/" in name:
        path = posixpath.normpath(expand(name, posixpath.dirname(requester.path), me))
        obj = fits(path)
        return ((path, obj, "path") if obj else None), (path,), tuple(skipped)
    candidates = [(posixpath.join(d, name), via) for d, via in _directories(requester, by_path, ld_library_path)]
    # the cache names files, not directories: after RUNPATH, before the directories it is built from
    candidates += [(path, "ld.so.cache") for path in cache.get(name, ())]
    candidates += [(posixpath.join(d, name), "ld.so.conf") for d in conf]
    candidates += [(posixpath.join(d, name), "default") for d in default_dirs(me.machine, me.bits)]
    tried: dict[str, None] = {}  # where it looked, in order: directories, and the cache
    seen: set[str] = set()
    for path, via in candidates:
        tried[CACHE if via == "ld.so.cache" else posixpath.dirname(path)] = None
        if path in seen:
            continue
        seen.add(path)
        obj = fits(path)
        if obj is not None:
            return (path, obj, via), tuple(tried), tuple(skipped)
    return None, tuple(tried), tuple(skipped)


def _directories(
    requester: Loaded, by_path: dict[str, Loaded], ld_library_path: Sequence[str]
) -> list[tuple[str, str]]:
    me = requester.elf
    out: list[tuple[str, str]] = []
    if not me.runpath:
        chain: Optional[Loaded] = requester
        while chain is not None:
            origin = posixpath.dirname(chain.path)
            if not chain.elf.runpath:  # an object with both has its RPATH ignored (glibc get-dynamic-info.h)
                out += [(posixpath.normpath(expand(d, origin, chain.elf)), "RPATH") for d in chain.elf.rpath]
            chain = by_path.get(chain.needed_by) if chain.needed_by else None
    out += [(posixpath.normpath(d), "LD_LIBRARY_PATH") for d in ld_library_path if d]
    origin = posixpath.dirname(requester.path)
    out += [(posixpath.normpath(expand(d, origin, me)), "RUNPATH") for d in me.runpath]
    return out
