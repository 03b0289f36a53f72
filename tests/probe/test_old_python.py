"""The probe on a fleet node's own old Python: ``ascenv fleet`` runs it under Python 3.7 where a
node has nothing newer (ascenv/fleet/node_main.py), so on 3.7 it must give the very snapshot
this Python gives, on every fixture machine."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ascenv import proc
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from ascenv.snapshot_io import snapshot_to_json
from tests.fixture_hosts import HOST_NAMES, build_host

PY37 = Path("/root/.pyenv/versions/3.7.16/bin/python3.7")
REPO = Path(__file__).resolve().parents[2]

# What node_main's probe-only path does, printed without the creation time (it differs per run).
_ON_OLD_PYTHON = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
from ascenv import proc
from ascenv.probe.snapshot import collect
from ascenv.probe.fs import Root
from ascenv.snapshot_io import snapshot_to_json
data = snapshot_to_json(collect(Root(sys.argv[2]), dict(os.environ), proc.run))
data.pop("created")
print(json.dumps(data, sort_keys=True))
"""


@pytest.fixture(scope="module")
def python37() -> Path:
    if not PY37.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"no Python 3.7 at {PY37}: the machines CI runs on carry pyenv's 3.7.16")
        pytest.skip(f"no Python 3.7 at {PY37}")
    return PY37


@pytest.mark.parametrize("name", HOST_NAMES)
def test_the_probe_on_python_3_7_gives_the_snapshot_this_python_gives(python37, name, tmp_path):
    host = build_host(name, tmp_path)
    old = subprocess.run(
        [str(python37), "-B", "-c", _ON_OLD_PYTHON, str(REPO), str(host.root)],
        env=dict(host.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert old.returncode == 0, old.stderr
    here = snapshot_to_json(collect(Root(host.root), dict(host.environ), proc.run))
    here.pop("created")
    assert json.loads(old.stdout) == json.loads(json.dumps(here))
