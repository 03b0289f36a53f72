"""README's walkthrough "From a fresh clone: package, inspect, install, check, roll back", run as a
user would (#25 item 1): its fenced block is read from README.md and each line is run, exactly as
written, by bash in a fresh copy of the repository's files, with ``ascenv`` on PATH running that
copy's code, a temporary HOME, the default store (.ascenv/store of the copy) and the install path
the block names. A line whose comment says "exit N" must exit N, every other line 0.

Needs the Docker engine (marked ``engine``: under CI=true a missing engine fails) and the pinned
opp-packager-bookworm image, which the ``packager_image`` fixture leaves in the engine (a
bootstrap of a few minutes when absent, once)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine_fixtures import unavailable

REPO = Path(__file__).resolve().parents[1]
HEADING = "### From a fresh clone: package, inspect, install, check, roll back"
# what the walkthrough must show, in this order (a README edit dropping one fails here)
STEPS = (
    "ascenv build add_custom --target npu",
    "ascenv package inspect",
    "ascenv install ",
    "ascenv op check",
    "ascenv install --rollback",
)


def walkthrough(readme: str) -> list[str]:
    """The command lines of the first ```sh block after HEADING."""
    start = readme.index(HEADING)
    block = re.search(r"^```sh\n(.*?)^```$", readme[start:], re.S | re.M)
    assert block is not None, f"no ```sh block after {HEADING!r}"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def expected_exit(line: str) -> int:
    comment = line.partition("#")[2]
    found = re.search(r"\bexit (\d+)\b", comment)
    return int(found.group(1)) if found else 0


def test_the_walkthrough_block_holds_every_step_in_order() -> None:
    lines = walkthrough((REPO / "README.md").read_text(encoding="utf-8"))
    at = [next((i for i, line in enumerate(lines) if step in line.partition("#")[0]), -1) for step in STEPS]
    assert -1 not in at and at == sorted(at), list(zip(STEPS, at))
    assert [expected_exit(line) for line in lines if "op check" in line] == [1]  # says what it lacks


def test_expected_exit_reads_the_comment_only() -> None:
    assert expected_exit("ascenv op check X   # exit 1: see below") == 1
    assert expected_exit("ascenv install x   # the previous vendor kept") == 0
    assert expected_exit("echo exit 3") == 0


def fresh_clone(target: Path) -> Path:
    """The repository's files as a clone has them: tracked and new ones, never what .gitignore
    names (.ascenv/, .venv/, caches), copied with their working-tree contents."""
    git = shutil.which("git")
    done = (
        subprocess.run(
            [git, "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=False,
        )
        if git
        else None
    )
    if done is None or done.returncode != 0:
        unavailable("the walkthrough copies the repository's files with git ls-files, and git failed here")
        raise AssertionError("unreachable")
    for name in sorted(set(done.stdout.decode().split("\0")) - {""}):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)
    return target


@pytest.mark.engine
@pytest.mark.slow
def test_the_readme_walkthrough_runs_from_a_fresh_clone(tmp_path: Path, packager_image: str) -> None:
    clone = fresh_clone(tmp_path / "ascenv")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ascenv").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ascenv "$@"\n')
    (bin_dir / "ascenv").chmod(0o755)
    env = dict(os.environ)  # conftest has removed ASCEND_*, ACL_* and ASCENV_* and set a temporary HOME
    env.update(PATH=f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}", PYTHONPATH=str(clone), HOME=str(tmp_path / "h"))
    (tmp_path / "h").mkdir()

    outputs: list[tuple[str, str]] = []  # (the command as written, what it printed)
    for line in walkthrough((clone / "README.md").read_text(encoding="utf-8")):
        done = subprocess.run(
            ["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=1200, check=False
        )
        assert done.returncode == expected_exit(line), f"{line}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        outputs.append((line.partition("#")[0], done.stdout + done.stderr))

    def printed(*words: str) -> str:
        return "".join(text for command, text in outputs if all(w in command for w in words))

    builds = [p for p in (clone / ".ascenv" / "store" / "add_custom").iterdir() if not p.name.startswith(".")]
    assert len(builds) == 1 and 'target = "npu"' in (builds[0] / "manifest.toml").read_text()
    assert packager_image in (builds[0] / "manifest.toml").read_text()  # built in the pinned image
    (package,) = (builds[0] / "outputs").glob("custom_opp_*.run")

    inspected = printed("ascenv package inspect")
    assert "sha256 ok" in inspected and "vendor ascenv" in inspected and "AddCustom" in inspected
    assert "packages/vendors/ascenv/op_impl/ai_core/tbe/config/ascend910b/aic-ascend910b-ops-info.json" in inspected
    assert "manifest recorded" in printed("ascenv install add_custom")
    from_file = printed("ascenv install custom_opp_")
    assert "inspected before it ran" in from_file and "previous ascenv kept" in from_file
    checked = printed("ascenv op check")
    assert "invisible to ATC" in checked and "cannot run" in checked and "no aclnn interface" in checked
    assert "rolled back" in printed("ascenv install --rollback")

    # after the rollback the store build's vendor is live again, its manifest with it; the .run
    # file's install is kept beside it, without one
    live = clone / "opp" / "vendors" / "ascenv"
    assert (live / "ascenv-manifest.toml").read_bytes() == (builds[0] / "manifest.toml").read_bytes()
    assert not (clone / "opp" / ".ascenv-previous" / "ascenv" / "ascenv-manifest.toml").exists()
    assert (live / "op_impl/ai_core/tbe/ascenv_impl/dynamic/add_custom.cpp").read_bytes() == (
        REPO / "kernels/add_custom/op_kernel/add_custom.cpp"
    ).read_bytes()
    assert (live / "bin" / "set_env.bash").read_text().startswith(f"export ASCEND_CUSTOM_OPP_PATH={live}:")
    assert package.name.startswith("custom_opp_debian_")
