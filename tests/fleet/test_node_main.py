"""The bundle's node-side step run directly by old Pythons, as Ansible's ``script`` runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ascenv.fleet.bundle import build_bundle
from tests.fixture_hosts import build_host

PYENV = Path("/root/.pyenv/versions")


def _python(version: str) -> Path:
    found = sorted(PYENV.glob(f"{version}.*/bin/python{version}"))
    if not found:
        pytest.skip(f"no Python {version} under {PYENV}")
    return found[-1]


def _step(python: Path, bundle: Path, args: list[str], environ: dict) -> tuple[int, dict]:
    done = subprocess.run([str(python), str(bundle), *args], env=environ, capture_output=True, text=True, timeout=120)
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1])


def test_on_python_3_7_the_step_prints_the_snapshot_and_leaves_nothing(tmp_path):
    python = _python("3.7")
    host = build_host("a2-cann800", tmp_path / "h")
    (tmp_path / "step").mkdir()
    bundle = build_bundle(tmp_path / "step" / "ascenv-node.pyz")
    # only python3.7 on PATH, so no newer interpreter is chosen
    environ = {**host.environ, "PATH": f"{host.bin}:{python.parent}"}
    code, envelope = _step(python, bundle, ["--root", str(host.root)], environ)
    assert code == 0, envelope
    assert envelope["python"].startswith("3.7.")
    assert envelope["snapshot"]["schema"] == 1
    assert len(envelope["snapshot"]["npu"]["chips"]) == 8
    assert envelope["snapshot"]["driver"]["version"] == "25.0.rc1.1"
    assert sorted(p.name for p in bundle.parent.iterdir()) == ["ascenv-node.pyz"]  # its unpacked copy is gone


def test_a_missing_root_on_python_3_7_is_the_node_error_not_an_empty_machine(tmp_path):
    python = _python("3.7")
    bundle = build_bundle(tmp_path / "ascenv-node.pyz")
    code, envelope = _step(python, bundle, ["--root", str(tmp_path / "nope")], {"PATH": str(python.parent)})
    assert code == 1 and "is not a directory on the node" in envelope["error"]
    assert "snapshot" not in envelope


def test_python_3_6_is_reported_with_its_version(tmp_path):
    python = _python("3.6")
    bundle = build_bundle(tmp_path / "ascenv-node.pyz")
    code, envelope = _step(python, bundle, [], {"PATH": str(python.parent)})
    assert code == 3
    assert envelope["python"].startswith("3.6.") and "older than 3.7" in envelope["error"]


def test_clean_cache_runs_op_checks_exact_command_once_and_nothing_for_another_root(monkeypatch):
    """--clean-cache: the command of each ASC-VENDOR-STALE-CACHE finding, once per command; a
    finding about a --root tree says where to run it instead, and nothing is run for it."""
    from ascenv.fleet import node_main

    ran = []
    monkeypatch.setattr(node_main, "_run", lambda argv: ran.append(argv) or (0, "", ""))
    command = "ascenv clean-cache --kind kernel-cache --kind fuzzy-kernel-cache --soc ascend910b --stale --yes"
    doc = {
        "findings": [
            {"id": "ASC-VENDOR-STALE-CACHE", "fix": command},
            {"id": "ASC-VENDOR-STALE-CACHE", "fix": command},  # the same cache, stale for two vendors
            {"id": "ASC-VENDOR-STALE-CACHE", "fix": f"in the system whose root is /r: {command}"},
            {"id": "ASC-VENDOR-SHADOWED", "fix": "ascenv clean-cache --yes"},
        ]
    }
    assert node_main._clean_stale(doc) == [command]
    assert ran == [command.split()[1:]]
