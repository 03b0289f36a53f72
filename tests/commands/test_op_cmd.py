"""`ascenv op check` through cli.main on a generated fixture root."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.package.pkgbuild import vendor_tree
from tests.package.test_visibility import OPP, machine


def ascenv(cwd: Path, *argv: str, environ=None) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    return run_cli(argv, {"PATH": os.environ.get("PATH", ""), **(environ or {})}, cwd)


def test_op_check_json_and_exit_codes(tmp_path: Path) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize")
    argv = ("op", "check", "--root", str(root), "--soc", "Ascend910B4", "--arch", "aarch64", "--format", "json")
    code, out, err = ascenv(tmp_path, *argv, environ={"ASCEND_OPP_PATH": OPP})
    assert code == 0, err
    doc = json.loads(out)
    assert doc["compute_unit"] == "ascend910b"
    assert doc["op_types"] == [
        {"op_type": "AddCustom", "vendor": "customize", "atc": True, "runtime": True, "aclnn": True, "shadowed": []}
    ]
    code, out, err = ascenv(
        tmp_path,
        *argv[:-2],
        environ={"ASCEND_OPP_PATH": OPP, "ASCEND_CUSTOM_OPP_PATH": "/usr/local/Ascend/ascend-toolkit/latest/opp"},
    )
    assert code == 1
    assert "ASC-VENDOR-PKGROOT" in out and "fix: replace /usr/local/Ascend/ascend-toolkit/latest/opp with" in out


def test_op_check_arch_mismatch_human(tmp_path: Path) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize", arch="x86_64")
    code, out, _ = ascenv(
        tmp_path,
        "op",
        "check",
        "--root",
        str(root),
        "--soc",
        "ascend910b",
        "--arch",
        "aarch64",
        environ={"ASCEND_OPP_PATH": OPP},
    )
    assert code == 1 and "AddCustom (vendor customize) is invisible to ATC" in out


def test_unknown_soc_is_usage_error(tmp_path: Path) -> None:
    code, _, err = ascenv(tmp_path, "op", "check", "--root", str(tmp_path), "--soc", "Ascend999Z")
    assert code == 2 and "--soc Ascend999Z is not a SoC ascenv knows" in err


def test_explain_knows_the_new_ids(tmp_path: Path) -> None:
    for id in ("ASC-VENDOR-OPTYPE", "ASC-VENDOR-ACLNN", "ASC-VENDOR-SHADOWED", "ASC-VENDOR-PKGROOT"):
        code, out, err = ascenv(tmp_path, "explain", id)
        assert code == 0 and "ascenv op check" in out, err


def test_op_check_reports_a_kernel_cache_older_than_the_vendor(tmp_path: Path) -> None:
    from tests.package.test_visibility import FIX, INSTALLED, installed_vendor, kernel_cache, tree_hash

    root = installed_vendor(tmp_path)
    kernel_cache(root / "home/dev", at=INSTALLED - 86400)
    before = tree_hash(root / "home")
    argv = ("op", "check", "--root", str(root), "--soc", "Ascend910B4", "--arch", "aarch64")
    code, out, err = ascenv(tmp_path, *argv, environ={"ASCEND_OPP_PATH": OPP, "HOME": "/home/dev"})
    assert code == 0, err  # a warning: the operator is usable, the cache may shadow it
    assert "warn ASC-VENDOR-STALE-CACHE: kernel-cache Ascend910B4 predates the install of vendor customize" in out
    assert f"fix: in the system whose root is {root}: {FIX}" in " ".join(out.split())
    assert "not checked" not in out
    assert tree_hash(root / "home") == before
    code, _, _ = ascenv(tmp_path, "explain", "ASC-VENDOR-STALE-CACHE")
    assert code == 0


def test_no_vendor_at_all_says_where_it_looked_not_only_a_header(tmp_path: Path) -> None:
    (tmp_path / "opp" / "vendors").mkdir(parents=True)
    for environ, where in (
        (
            {"ASCEND_OPP_PATH": str(tmp_path / "opp")},
            f"looked in {tmp_path / 'opp'}/vendors; ASCEND_CUSTOM_OPP_PATH unset",
        ),
        ({"ASCEND_OPP_PATH": str(tmp_path / "no-opp-here")}, f"looked in {tmp_path / 'no-opp-here'}/vendors"),
        ({}, "no opp directory to look in"),
    ):
        code, out, err = ascenv(tmp_path, "op", "check", "--root", str(tmp_path / "opp"), environ=environ)
        said = " ".join(err.split())
        assert code == 0 and out == "", out
        assert "no custom operator vendor found" in said and where in said
        code, out, _ = ascenv(
            tmp_path, "op", "check", "--root", str(tmp_path / "opp"), "--format", "json", environ=environ
        )
        assert any("no custom operator vendor found" in n for n in json.loads(out)["notes"])
