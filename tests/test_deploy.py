"""deploy/: the Kubernetes DaemonSet validated offline against the Kubernetes API schema
(kubernetes-validate bundles the OpenAPI schemas of each release), the systemd units checked by
``systemd-analyze verify`` (under CI=true it must be there: .ci/run installs systemd)."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.engine_fixtures import unavailable

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
DAEMONSET = DEPLOY / "kubernetes" / "daemonset.yaml"
UNITS = sorted((DEPLOY / "systemd").iterdir())
K8S_VERSION = "1.30.0"  # the oldest release still supported upstream when this was written


def daemonset() -> dict:
    return yaml.safe_load(DAEMONSET.read_text())


def validate(document: dict) -> None:
    # strict: a misspelt key (readonly for readOnly) is an error, not ignored as the API server would
    kubernetes_validate.validate(document, K8S_VERSION, strict=True)


def test_daemonset_is_a_valid_kubernetes_object():
    validate(daemonset())


def _container(doc: dict, name: str) -> dict:
    return next(c for c in doc["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def test_daemonset_reads_the_host_read_only_and_writes_only_the_textfile_dir():
    doc = daemonset()
    export = _container(doc, "export")
    mounts = {m["mountPath"]: m for m in export["volumeMounts"]}
    assert mounts["/host"]["readOnly"] is True
    script = export["args"][0]
    assert "export prometheus --root /host" in script
    assert "-o /textfile/ascenv.prom" in script
    writable = {path for path, m in mounts.items() if not m.get("readOnly")}
    assert writable == {"/textfile", "/tmp"}
    assert export["securityContext"]["readOnlyRootFilesystem"] is True
    volumes = {v["name"]: v for v in doc["spec"]["template"]["spec"]["volumes"]}
    assert volumes[mounts["/host"]["name"]]["hostPath"]["path"] == "/"


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: _container(d, "export")["volumeMounts"][0].update(readonly=True),  # misspelt key
        lambda d: d["spec"].pop("selector"),  # a required field
        lambda d: d["spec"]["template"]["spec"]["volumes"][0]["hostPath"].update(type=7),  # a wrong type
    ],
    ids=["unknown-key", "missing-selector", "wrong-type"],
)
def test_the_validator_rejects_a_spoilt_daemonset(spoil):
    doc = daemonset()
    spoil(doc)
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(doc)


def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        unavailable("systemd-analyze is not installed (Debian: systemd)")
    return str(found)


def verify(units: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    """``systemd-analyze verify`` of ``units`` (name -> text) under a root of their own: the
    distribution's units (sysinit.target, timers.target) copied in, ExecStart's ascenv a stub
    (verify refuses a command that is not there)."""
    root = tmp_path / "root"
    shutil.copytree("/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    stub = root / "usr/local/bin/ascenv"
    stub.parent.mkdir(parents=True)
    stub.write_text("#!/bin/sh\n")
    stub.chmod(0o755)
    paths = []
    for name, text in units.items():
        path = root / "etc/systemd/system" / name
        path.write_text(text)
        paths.append(str(path))
    return subprocess.run(
        [systemd_analyze(), "verify", "--man=no", f"--root={root}", *paths],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": os.environ.get("PATH", ""), "SYSTEMD_LOG_COLOR": "0"},
    )


def shipped_units() -> dict[str, str]:
    return {p.name: p.read_text() for p in UNITS}


def test_systemd_units_verify(tmp_path):
    assert sorted(shipped_units()) == ["ascenv-export.service", "ascenv-export.timer"]
    done = verify(shipped_units(), tmp_path)
    # verify exits 0 even on an unknown key (it only warns): no output at all is the pass
    assert done.returncode == 0 and not done.stderr.strip() and not done.stdout.strip(), done.stderr


@pytest.mark.parametrize(
    ("unit", "old", "new"),
    [
        ("ascenv-export.timer", "OnUnitActiveSec=", "OnUnitActiveSecs="),
        ("ascenv-export.service", "ProtectSystem=strict", "ProtectSystem=stricter"),
        ("ascenv-export.service", "Type=oneshot", "Type=oneshoot"),
    ],
)
def test_systemd_analyze_catches_a_spoilt_unit(tmp_path, unit, old, new):
    units = shipped_units()
    assert old in units[unit]
    units[unit] = units[unit].replace(old, new)
    done = verify(units, tmp_path)
    assert done.returncode != 0 or done.stderr.strip()


def test_service_runs_export_read_only_but_for_the_textfile_dir():
    service = configparser.ConfigParser(strict=False, interpolation=None)
    service.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    service.read_string(shipped_units()["ascenv-export.service"])
    s = service["Service"]
    assert s["ExecStart"].split()[1:3] == ["export", "prometheus"]
    assert s["ProtectSystem"] == "strict"
    out = s["ExecStart"].split("-o ")[1].split()[0]
    assert os.path.dirname(out) == s["ReadWritePaths"]
