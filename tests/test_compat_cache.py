"""compat.load_cached: the same matrix as compat.load(), kept between runs only when it is safe."""

from __future__ import annotations

import dataclasses
import os
import pickle
import re
import shutil
from pathlib import Path

from ascenv import compat, paths

SHIPPED = paths.data_dir("compat")
CACHE = "compat-matrix.pickle"


def test_miss_then_hit_give_the_loaded_matrix(tmp_path):
    fresh = compat.load()
    first = compat.load_cached(str(tmp_path / "cache"))
    assert first == fresh
    cache = tmp_path / "cache" / CACHE
    assert cache.is_file() and cache.stat().st_mode & 0o777 == 0o600
    assert compat.load_cached(str(tmp_path / "cache")) == fresh


def tamper(cache: Path) -> None:
    """Keep the key, swap the matrix for a visibly different one."""
    key, matrix = pickle.loads(cache.read_bytes())
    cache.write_bytes(pickle.dumps((key, dataclasses.replace(matrix, socs=()))))


def test_the_cache_is_used_only_when_nobody_else_can_write_it(tmp_path):
    compat.load_cached(str(tmp_path))
    tamper(tmp_path / CACHE)
    os.chmod(tmp_path / CACHE, 0o600)
    assert compat.load_cached(str(tmp_path)).socs == ()  # proof that a hit skips the TOML
    tamper(tmp_path / CACHE)
    os.chmod(tmp_path / CACHE, 0o666)
    assert compat.load_cached(str(tmp_path)).socs != ()


def test_edited_data_rebuilds_the_cache(tmp_path):
    folder = tmp_path / "compat"
    shutil.copytree(SHIPPED, folder)
    before = compat.load_cached(str(tmp_path / "cache"), folder)
    text = (folder / "torch_npu.toml").read_text(encoding="utf-8")
    (folder / "torch_npu.toml").write_text(text.replace('retrieved = "', 'retrieved = "x', 1), encoding="utf-8")
    after = compat.load_cached(str(tmp_path / "cache"), folder)
    assert after.pypi.retrieved == "x" + before.pypi.retrieved


def test_broken_or_unwritable_cache_still_loads(tmp_path):
    (tmp_path / CACHE).write_bytes(b"not a pickle")
    assert compat.load_cached(str(tmp_path)) == compat.load()
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert compat.load_cached(str(blocked / "cache")) == compat.load()  # a file where the directory should be
    assert compat.load_cached(None) == compat.load()


def test_the_cache_is_keyed_by_the_overlay_files_too(tmp_path):
    # issue #22 item 6: a cached shipped matrix is not returned once an overlay replaces a file
    from ascenv import compat, paths

    shipped = paths.data_dir("compat")
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    cache = str(tmp_path / "cache")
    assert compat.load_cached(cache).overlay == ()
    text = (shipped / "stacks.toml").read_text(encoding="utf-8")
    newer = re.sub(r'^as_of = "[^"]*"', 'as_of = "2027-01-05"', text, count=1, flags=re.MULTILINE)
    assert newer != text
    (overlay / "stacks.toml").write_text(newer)
    with_overlay = compat.load_cached(cache, overlay=overlay)
    assert with_overlay.overlay == (str(overlay / "stacks.toml"),)
    assert compat.load_cached(cache, overlay=overlay) == with_overlay  # from the cache now
    assert compat.load_cached(cache).overlay == ()
