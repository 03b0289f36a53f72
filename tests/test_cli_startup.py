"""CLI start-up: commands are listed from their source and only the one that runs is imported
(doctor never imports torch and starts fast)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

from ascenv import cli

REPO = Path(__file__).resolve().parents[1]


def test_specs_read_from_source_equal_the_modules_values():
    specs = cli.command_specs()
    assert {s.name for s in specs} >= {"doctor", "explain", "snapshot", "lock", "diff"}
    for spec in specs:
        module = importlib.import_module(spec.module)
        assert (spec.name, spec.order, spec.help) == (module.NAME, module.ORDER, module.HELP)
    assert [s.order for s in specs] == sorted(s.order for s in specs)


def test_top_level_help_lists_every_command_with_its_help(capsys):
    assert cli.main(["--help"]) == 0
    out = "".join(capsys.readouterr().out.split())  # argparse wraps long help lines, also at hyphens
    for spec in cli.command_specs():
        assert spec.name in out and "".join(spec.help.split()) in out


def test_a_command_gets_its_own_arguments_and_description(capsys):
    assert cli.main(["doctor", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--strict" in out and "compatibility matrix" in out


def test_doctor_imports_no_other_command_and_never_torch(tmp_path):
    snapshot = tmp_path / "snap.json"
    snapshot.write_text(json.dumps({"schema": 1}))
    script = (
        "import sys\nfrom ascenv import cli\n"
        f"code = cli.main(['doctor', '--from', {str(snapshot)!r}, '--format', 'json'])\n"
        "loaded = sorted(m for m in sys.modules\n"
        "    if m.startswith('ascenv.commands.') or m.split('.')[0] in ('torch', 'torch_npu'))\n"
        "print(repr((code, loaded)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    code, loaded = eval(done.stderr.strip().splitlines()[-1])  # noqa: S307 - our own repr
    assert code == 0
    shared = {"ascenv.commands._common"}  # commands import no other command module
    assert set(loaded) <= shared | {"ascenv.commands.doctor"} and "ascenv.commands.doctor" in loaded
