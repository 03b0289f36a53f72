"""The data folders work from an installed, non-editable wheel, not only from a checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from ascenv import schemas
from tests.json_schemas import assert_valid
from tests.test_walkthrough import fresh_clone

REPO = Path(__file__).resolve().parents[1]
# the installed wheel's interpreter must import the installed ascenv: a PYTHONPATH naming a checkout
# (the way tests are run from a worktree) would import that checkout instead and find its data folders
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    # from the files a clone has (no __pycache__ a test run left in kernels/): hatch's force-include
    # copies a data folder verbatim, whatever else lies in it
    source = fresh_clone(tmp_path_factory.mktemp("source") / "ascenv")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("ascenv-*.whl")
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True)
    subprocess.run([str(env_dir / "bin" / "pip"), "install", "-q", str(wheel)], check=True, capture_output=True)
    return env_dir


@pytest.mark.slow
def test_wheel_ships_data_and_runs(installed: Path, tmp_path: Path) -> None:
    python = installed / "bin" / "python"
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import json, ascenv.paths as p; "
            "print(json.dumps({n: str(p.data_dir(n)) for n in ('compat', 'containers', 'kernels', 'deploy')}))",
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=CLEAN_ENV,
    )
    dirs = json.loads(where.stdout)
    for name, path in dirs.items():
        assert "site-packages" in path and path.endswith(f"_data/{name}"), (name, path)
        # pip byte-compiles every .py it installs (kernels/add_custom/scripts/pack_npu.py): its
        # __pycache__ is the installer's, not the wheel's
        shipped = sorted(
            p.relative_to(path).as_posix()
            for p in Path(path).rglob("*")
            if p.is_file() and "__pycache__" not in p.relative_to(path).parts
        )
        in_repo = sorted(
            p.relative_to(REPO / name).as_posix()
            for p in (REPO / name).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        )
        assert shipped == in_repo, name
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "os-release").write_text('ID=openEuler\nVERSION_ID="22.03"\n')
    snap = subprocess.run(
        [str(installed / "bin" / "ascenv"), "snapshot", "--root", str(root), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert snap.returncode == 0, snap.stderr
    data = json.loads(snap.stdout)
    assert data["schema"] == 1 and data["host"]["os_id"] == "openEuler"
    # the JSON Schemas ship in the wheel (ascenv.schemas), and the document follows the shipped one
    shipped = subprocess.run(
        [str(python), "-c", "import json, ascenv.schemas as s; print(json.dumps(s.load('snapshot')))"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=CLEAN_ENV,
    )
    schema = json.loads(shipped.stdout)
    assert schema == schemas.load("snapshot")
    assert_valid("snapshot", data)
