"""ascenv.abi.loader: ld.so's search order, on libraries built here and placed under a fixture root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv.abi import loader
from ascenv.abi.tree import Tree
from ascenv.probe.fs import Root
from tests.abi.build import build, needs_tools, place

pytestmark = needs_tools


def dep(d: Path, tag: str, soname: str = "libdep.so") -> Path:
    return build(
        d / tag / soname,
        f"int dep(void) {{ return 1; }}\nint dep_{tag}(void) {{ return 2; }}",
        soname=soname,
        nostdlib=True,
    )


def consumer(d: Path, name: str, links: list[Path], *, rpath: str = "", new_dtags: bool = True) -> Path:
    flags = (
        [f"-Wl,-rpath,{rpath}", "-Wl,--enable-new-dtags" if new_dtags else "-Wl,--disable-new-dtags"] if rpath else []
    )
    return build(
        d / name, "extern int dep(void); int use(void) { return dep(); }", links=links, flags=flags, nostdlib=True
    )


def found(order: loader.LoadOrder, name: str) -> tuple[str, str]:
    hit = next(o for o in order.objects if o.path.rsplit("/", 1)[-1] == name and o.found_via != "start")
    return hit.path, hit.found_via


def test_needed_found_only_through_origin(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    lib = dep(d, "x")
    place(root, "/opt/app/deps/libdep.so", lib)
    for path, rpath, new in (
        ("/opt/app/lib/libc1.so", "$ORIGIN/../deps", True),  # RUNPATH
        ("/opt/app/lib/libc2.so", "${ORIGIN}/../deps", False),  # RPATH, braces
    ):
        place(root, path, consumer(d, path.rsplit("/", 1)[-1], [lib], rpath=rpath, new_dtags=new))
        order = loader.load(Tree(Root(root)), [path])
        assert found(order, "libdep.so") == ("/opt/app/deps/libdep.so", "RUNPATH" if new else "RPATH")
        assert order.missing == ()
    # the same library somewhere else: $ORIGIN now points elsewhere and nothing else has it
    place(root, "/opt/other/lib/libc1.so", d / "libc1.so")
    order = loader.load(Tree(Root(root)), ["/opt/other/lib/libc1.so"])
    assert [m.name for m in order.missing] == ["libdep.so"]
    assert order.missing[0].searched[0] == "/opt/other/deps"


def test_runpath_comes_after_ld_library_path_rpath_before(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    a, b = dep(d, "a"), dep(d, "b")
    place(root, "/opt/a/libdep.so", a)
    place(root, "/opt/b/libdep.so", b)
    place(root, "/opt/run.so", consumer(d, "run.so", [a], rpath="/opt/a", new_dtags=True))
    place(root, "/opt/rp.so", consumer(d, "rp.so", [a], rpath="/opt/a", new_dtags=False))
    tree = Tree(Root(root))
    assert found(loader.load(tree, ["/opt/run.so"], ld_library_path=["/opt/b"]), "libdep.so") == (
        "/opt/b/libdep.so",
        "LD_LIBRARY_PATH",
    )
    assert found(loader.load(tree, ["/opt/run.so"]), "libdep.so") == ("/opt/a/libdep.so", "RUNPATH")
    assert found(loader.load(tree, ["/opt/rp.so"], ld_library_path=["/opt/b"]), "libdep.so") == (
        "/opt/a/libdep.so",
        "RPATH",
    )


def test_rpath_of_the_loader_chain_but_not_its_runpath(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    leaf = build(d / "libleaf.so", "int leaf(void){return 1;}", nostdlib=True)
    mid = build(d / "libmid.so", "extern int leaf(void); int dep(void){return leaf();}", links=[leaf], nostdlib=True)
    place(root, "/opt/deps/libleaf.so", leaf)
    place(root, "/opt/deps/libmid.so", mid)
    place(root, "/opt/top_rpath.so", consumer(d, "top_rpath.so", [mid], rpath="/opt/deps", new_dtags=False))
    place(root, "/opt/top_runpath.so", consumer(d, "top_runpath.so", [mid], rpath="/opt/deps", new_dtags=True))
    tree = Tree(Root(root))
    order = loader.load(tree, ["/opt/top_rpath.so"])
    assert found(order, "libleaf.so") == ("/opt/deps/libleaf.so", "RPATH")  # top's RPATH serves mid's DT_NEEDED
    order = loader.load(tree, ["/opt/top_runpath.so"])
    assert found(order, "libmid.so") == ("/opt/deps/libmid.so", "RUNPATH")
    assert [(m.name, m.needed_by) for m in order.missing] == [("libleaf.so", "/opt/deps/libmid.so")]


def test_ld_so_conf_and_its_includes(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    lib = dep(d, "x")
    place(root, "/usr/local/Ascend/lib64/libdep.so", lib)
    place(root, "/opt/c.so", consumer(d, "c.so", [lib]))
    (root / "etc/ld.so.conf.d").mkdir(parents=True)
    (root / "etc/ld.so.conf").write_text("# system\ninclude ld.so.conf.d/*.conf\n/usr/local/lib\n")
    (root / "etc/ld.so.conf.d/ascend.conf").write_text("/usr/local/Ascend/lib64  # CANN\n")
    (root / "etc/ld.so.conf.d/loop.conf").write_text("include /etc/ld.so.conf\n/opt/x:/opt/y,/opt/z\n")
    (root / "etc/ld.so.conf.d/skip.txt").write_text("/not/a/conf/file\n")
    tree = Tree(Root(root))
    conf = loader.conf_dirs(tree)
    assert conf == ("/usr/local/Ascend/lib64", "/opt/x", "/opt/y", "/opt/z", "/usr/local/lib")
    assert found(loader.load(tree, ["/opt/c.so"], conf=conf), "libdep.so") == (
        "/usr/local/Ascend/lib64/libdep.so",
        "ld.so.conf",
    )
    assert loader.load(tree, ["/opt/c.so"]).missing[0].name == "libdep.so"  # without the conf, nowhere


def test_library_of_another_machine_is_skipped(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    lib = dep(d, "x")
    mine = loader.TRIPLETS.get(os.uname().machine)
    if mine is None:
        pytest.skip("no multiarch triplet known for this machine")
    other = bytearray(lib.read_bytes())
    other[18:20] = (183 if os.uname().machine != "aarch64" else 62).to_bytes(2, "little")
    (d / "other").mkdir()
    (d / "other/libdep.so").write_bytes(bytes(other))
    place(root, "/opt/a/libdep.so", d / "other/libdep.so")
    place(root, "/opt/c.so", consumer(d, "c.so", [lib], rpath="/opt/a"))
    tree = Tree(Root(root))
    order = loader.load(tree, ["/opt/c.so"])
    assert order.missing[0].wrong_machine[0].startswith("/opt/a/libdep.so (")
    place(root, f"/usr/lib/{mine}/libdep.so", lib)
    order = loader.load(Tree(Root(root)), ["/opt/c.so"])
    assert found(order, "libdep.so") == (f"/usr/lib/{mine}/libdep.so", "default")


def test_symlinks_resolve_inside_the_root_and_load_once(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    lib = dep(d, "x", soname="libdep.so.1")
    place(root, "/opt/real/libdep.so.1.2.3", lib)
    (root / "opt/lib").mkdir(parents=True)
    (root / "opt/lib/libdep.so.1").symlink_to("/opt/real/libdep.so.1.2.3")  # absolute: must stay in the root
    place(root, "/opt/lib/c.so", consumer(d, "c.so", [lib], rpath="$ORIGIN"))
    order = loader.load(Tree(Root(root)), ["/opt/lib/c.so", "/opt/real/libdep.so.1.2.3"])
    assert len(order.objects) == 2  # the start object and its dependency are one file
    assert order.missing == ()


def test_nothing_is_loaded_or_executed(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    canary_file = tmp_path / "canary-was-run"
    canary = build(
        d / "libcanary.so",
        "#include <stdio.h>\nint dep(void) { return 3; }\n__attribute__((constructor)) static void run(void) "
        f'{{ FILE *f = fopen("{canary_file}", "w"); if (f) fclose(f); }}\n',
    )
    place(root, "/opt/lib/libcanary.so", canary)
    place(root, "/opt/lib/c.so", consumer(d, "c.so", [canary], rpath="$ORIGIN"))
    from ascenv.abi import symbols

    order = loader.load(Tree(Root(root)), ["/opt/lib/c.so"])
    symbols.unresolved(order)
    symbols.missing_versions(order)
    assert found(order, "libcanary.so")[0] == "/opt/lib/libcanary.so"
    assert not canary_file.exists()
    # the canary does fire when something really loads it: the assertion above can fail
    subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(canary)!r})"], check=True)
    assert canary_file.exists()


def test_expand_dynamic_string_tokens() -> None:
    from ascenv.elf import DynamicSymbols, ElfFile

    obj = ElfFile("aarch64", 64, True, None, (), (), (), DynamicSymbols.of(()), (), ())
    assert loader.expand("$ORIGIN/../${LIB}/$PLATFORM", "/o", obj) == "/o/../lib64/aarch64"
    assert loader.expand("$ORIGINAL/x", "/o", obj) == "$ORIGINAL/x"  # not a token: left as is
    assert loader.default_dirs("aarch64", 64)[:2] == ("/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu")
    assert loader.default_dirs("mips", 32) == ("/lib", "/usr/lib")


class _MemoryFiles:
    """Files in memory: the text of ld.so.conf and its includes, nothing else."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts

    def elf(self, path: str) -> None:
        return None

    def real(self, path: str) -> str:
        return path

    def text(self, path: str) -> str | None:
        return self.texts.get(path)

    def data(self, path: str) -> None:
        return None

    def glob(self, directory: str, pattern: str) -> list[str]:
        import fnmatch

        return sorted(
            p for p in self.texts if p.rsplit("/", 1)[0] == directory and fnmatch.fnmatch(p.rsplit("/", 1)[1], pattern)
        )


@given(st.dictionaries(st.sampled_from(["/etc/ld.so.conf", "/etc/a.conf", "/etc/d/b.conf"]), st.text(max_size=200)))
def test_ld_so_conf_of_any_text_ends_and_gives_absolute_dirs(texts: dict[str, str]) -> None:
    # an image's ld.so.conf is untrusted: includes of each other, odd lines, nothing raises or loops
    dirs = loader.conf_dirs(_MemoryFiles(texts))  # type: ignore[arg-type]
    assert all(d.startswith("/") for d in dirs) and len(dirs) == len(set(dirs))


def test_ld_so_conf_include_cycle() -> None:
    files = _MemoryFiles({"/etc/ld.so.conf": "include a.conf\n/x\n", "/etc/a.conf": "include /etc/ld.so.conf\n/y\n"})
    assert loader.conf_dirs(files) == ("/y", "/x")  # type: ignore[arg-type]


def _ldconfig(root: Path) -> None:
    """Build the root's /etc/ld.so.cache with the real ldconfig (-r: chroot into the root)."""
    if shutil.which("ldconfig") is None and not Path("/usr/sbin/ldconfig").exists():
        pytest.skip("no ldconfig")
    done = subprocess.run(
        [shutil.which("ldconfig") or "/usr/sbin/ldconfig", "-r", str(root)], capture_output=True, text=True
    )
    if not (root / "etc/ld.so.cache").exists():
        pytest.skip(f"ldconfig -r did not write a cache here: {done.stderr.strip()[-200:]}")


def test_ld_so_cache_written_by_ldconfig(tmp_path: Path) -> None:
    root, d = tmp_path / "root", tmp_path / "build"
    lib = dep(d, "x", soname="libdep.so.1")
    place(root, "/opt/cached/libdep.so.1", lib)
    place(root, "/opt/c.so", consumer(d, "c.so", [lib]))
    (root / "etc").mkdir(parents=True)
    (root / "etc/ld.so.conf").write_text("/opt/cached\n")
    _ldconfig(root)
    (root / "etc/ld.so.conf").unlink()  # from here on only the cache knows /opt/cached
    tree = Tree(Root(root))
    cache = loader.cache_entries(tree.data(loader.CACHE))
    assert cache["libdep.so.1"] == ("/opt/cached/libdep.so.1",)
    order = loader.load(tree, ["/opt/c.so"], cache=cache)
    assert found(order, "libdep.so.1") == ("/opt/cached/libdep.so.1", "ld.so.cache")
    # LD_LIBRARY_PATH comes before the cache
    place(root, "/opt/ldp/libdep.so.1", lib)
    order = loader.load(tree, ["/opt/c.so"], cache=cache, ld_library_path=["/opt/ldp"])
    assert found(order, "libdep.so.1") == ("/opt/ldp/libdep.so.1", "LD_LIBRARY_PATH")
    # a cache entry whose file is gone: searched, then the default directories
    (root / "opt/cached/libdep.so.1").unlink()
    order = loader.load(Tree(Root(root)), ["/opt/c.so"], cache=cache)
    assert loader.CACHE in order.missing[0].searched


@given(st.binary(max_size=300))
def test_any_cache_bytes_read_without_raising(tail: bytes) -> None:
    entries = loader.cache_entries(b"glibc-ld.so.cache1.1" + tail)
    assert all(isinstance(k, str) and all(isinstance(p, str) for p in v) for k, v in entries.items())
    assert loader.cache_entries(None) == {} and loader.cache_entries(b"ld.so-1.7.0") == {}
