"""`ascenv install` then `ascenv install --rollback` through cli.main, with packages made by
Debian's makeself in the msopgen vendor layout, their header given CANN's handling of
--install-path (tests.package.pkgbuild.cann_header); install.sh models CANN's --install-path copy."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ascenv import errors, store
from tests.cli_helpers import run_cli
from tests.package.pkgbuild import cann_header, make_package, needs_makeself
from tests.package.test_deploy import tree
from tests.test_store import add_entry

pytestmark = needs_makeself


def ascenv(cwd: Path, *argv: str) -> tuple[int, str, str]:
    return run_cli(argv, {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd)}, cwd)


def stored(tmp_path: Path, key: str, finished: str, **vendor: object) -> store.Entry:
    package = cann_header(make_package(tmp_path / f"pkg-{key[0]}", tmp_path / "canary", vendors={"customize": vendor}))
    st = store.Store(tmp_path / ".ascenv" / "store")
    return add_entry(
        st, "add_custom", key, target="npu", finished=finished, outputs={package.name: package.read_bytes()}
    )


def test_install_newer_then_rollback_gives_the_old_files_back_byte_for_byte(tmp_path: Path) -> None:
    old = stored(tmp_path, "a" * 64, "2026-01-01T00:00:00Z", kernel=b"kernel-v1")
    code, out, err = ascenv(tmp_path, "install", "add_custom", "--key", old.key, "--install-path", "opp")
    assert code == 0, err
    live = tmp_path / "opp" / "vendors" / "customize"
    before = tree(live)
    assert (live / "ascenv-manifest.toml").read_bytes() == (old.path / "manifest.toml").read_bytes()
    assert "previous" not in out  # nothing was replaced

    new = stored(tmp_path, "b" * 64, "2026-01-02T00:00:00Z", op_types=("AddCustom", "SubCustom"), kernel=b"v2")
    code, out, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp", "--format", "json")
    assert code == 0, err
    kept = tmp_path / "opp" / ".ascenv-previous" / "customize"
    assert json.loads(out)["kept"] == [str(kept)]
    assert tree(kept) == before
    after = tree(live)
    assert after != before and (live / "ascenv-manifest.toml").read_bytes() == (new.path / "manifest.toml").read_bytes()

    code, out, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp")
    assert code == 0, err
    assert tree(live) == before  # the old files, modes and links, and the old build's manifest
    assert tree(kept) == after  # the same command swaps back
    assert "ascenv clean-cache --kind kernel-cache --kind fuzzy-kernel-cache --soc ascend910b --yes" in out

    code, out, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp", "--format", "json")
    assert code == 0, err
    assert tree(live) == after and json.loads(out)["live"] == str(live)


def test_rollback_with_nothing_kept_and_install_without_op_are_usage_errors(tmp_path: Path) -> None:
    code, _, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp")
    assert code == errors.EXIT_USAGE and "no previous customize vendor is kept" in err
    code, _, err = ascenv(tmp_path, "install", "--install-path", "opp")
    assert code == errors.EXIT_USAGE and "needs OP" in err
