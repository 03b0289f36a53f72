"""ascenv.checks: checks found in the package, one module per layer, ID prefixes per layer, old IDs
still resolved, and no probe module behind an offline `doctor --from`."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import ascenv.checks as checks_package
from ascenv.checks import LAYER_PREFIXES, LAYERS, REGISTRY, RENAMED, check, check_modules, load_checks, resolve
from ascenv.snapshot_io import dumps_snapshot
from checks.helpers import a2_host
from tests.cli_helpers import run_cli
from tests.json_schemas import assert_valid

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(checks_package.__file__).parent


def _all_modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules([str(PACKAGE_DIR)])]


def test_every_module_registers_checks_or_is_a_helper():
    load_checks()
    registered = {info.function.__module__ for info in REGISTRY.values()}
    for name in _all_modules():
        module = importlib.import_module(f"ascenv.checks.{name}")
        holds = module.__name__ in registered
        if name.startswith("_"):
            assert not holds, f"{name} is a helper (leading _) but registers checks"
        else:
            assert holds or getattr(module, "HELPER", False) is True, (
                f"ascenv/checks/{name}.py registers no check and is not a helper: name it _{name}.py"
                " or set HELPER = True"
            )


def test_each_check_sits_in_the_module_of_its_layer_with_its_prefix():
    assert set(LAYER_PREFIXES) == set(LAYERS)
    assert set(LAYERS) <= set(check_modules())
    for info in load_checks().values():
        assert info.function.__module__ == f"ascenv.checks.{info.layer}", info.id
        assert info.id.startswith(LAYER_PREFIXES[info.layer]), info.id
    assert {info.layer for info in REGISTRY.values()} == set(LAYERS)  # no layer module is empty


def test_layer_modules_import_only_helpers_not_each_other():
    for name in LAYERS:
        tree = ast.parse((PACKAGE_DIR / f"{name}.py").read_text(encoding="utf-8"))
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        for module in imported:
            assert not module.startswith("ascenv.probe"), f"{name}.py imports {module}"
            if module.startswith("ascenv.checks."):
                assert module.split(".")[2].startswith("_"), f"{name}.py imports the layer module {module}"


def test_discovery_reads_the_package_directory(tmp_path, monkeypatch):
    (tmp_path / "newlayer.py").write_text("")
    (tmp_path / "_helper.py").write_text("")
    monkeypatch.setattr(checks_package, "__path__", [*checks_package.__path__, str(tmp_path)])
    names = check_modules()
    assert "newlayer" in names and "_helper" not in names
    assert names[: len(LAYERS)] == list(LAYERS)  # layer order first, so the registry is too


def _unregistered(snap, matrix):
    return iter(())


def test_a_check_outside_its_layer_module_or_prefix_is_refused():
    with pytest.raises(ValueError, match="belongs in ascenv.checks.kernels"):
        check("ASC-KERNELS-ELSEWHERE", layer="kernels", title="t", explain="e")(_unregistered)
    with pytest.raises(ValueError, match="ASC-PY-"):
        check("ASC-TORCH-WRONG", layer="python", title="t", explain="e")
    assert "ASC-KERNELS-ELSEWHERE" not in REGISTRY


# Users quote these in issues: each must keep resolving to the check it became.
OLD_IDS = {
    "ASC-PY-TORCH": "ASC-TORCH-PLUGIN",
    "ASC-SOC-VERSION": "ASC-KERNELS-TARGET",
    "ASC-COMPILER-OPP": "ASC-KERNELS-ABI",
}


def test_old_ids_resolve_to_the_renamed_checks():
    load_checks()
    assert RENAMED == OLD_IDS
    assert not set(RENAMED) & set(REGISTRY)
    for old, new in OLD_IDS.items():
        info = resolve(old.lower())
        assert info is not None and info.id == new
    assert resolve("ASC-NO-SUCH") is None


def test_explain_an_old_id_prints_the_new_text_and_says_it_was_renamed():
    code, out, _ = run_cli(["explain", "ASC-PY-TORCH"], {"PATH": "/usr/bin:/bin"})
    assert code == 0
    assert "ASC-PY-TORCH was renamed ASC-TORCH-PLUGIN" in out
    assert REGISTRY["ASC-TORCH-PLUGIN"].explain in out
    code, out, _ = run_cli(["explain", "asc-soc-version", "--format", "json"], {"PATH": "/usr/bin:/bin"})
    (entry,) = json.loads(out)["checks"]
    assert code == 0 and entry["id"] == "ASC-KERNELS-TARGET" and entry["renamed_from"] == ["ASC-SOC-VERSION"]


def test_offline_doctor_emits_new_ids_and_loads_no_probe_module(tmp_path):
    snapshot = tmp_path / "snap.json"
    snapshot.write_text(dumps_snapshot(a2_host()))
    script = (
        "import contextlib, io, sys\nfrom ascenv import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    code = cli.main(['doctor', '--from', {str(snapshot)!r}, '--format', 'json'])\n"
        "probes = sorted(m for m in sys.modules if m == 'ascenv.probe' or m.startswith('ascenv.probe.'))\n"
        "print(repr((code, probes, out.getvalue())), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    code, probes, out = eval(done.stderr.strip().splitlines()[-1])  # noqa: S307 - our own repr
    assert code in (0, 1) and probes == []
    document = json.loads(out)
    assert_valid("doctor", document)  # printed in a subprocess: tests/conftest.py does not see it
    ids = {f["id"] for f in document["findings"]}
    assert ids and ids <= set(REGISTRY) and not ids & set(RENAMED)
    assert "ASC-KERNELS-TARGET" in ids  # the A2 host's --soc_version, under its new ID
