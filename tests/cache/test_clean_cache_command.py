"""ascenv clean-cache end to end, on a fake home; the machine facts are injected."""

import io
import json
import os

import pytest

from ascenv import cli, errors
from ascenv.cache.entry import CannRecord, VendorRecord
from ascenv.cache.machine import MachineFacts
from ascenv.commands import clean_cache
from ascenv.output import Output
from tests.cache.helpers import tree_digest, write

OLD = 1_000_000.0
INSTALL = 2_000_000.0


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    write(str(home / "atc_data/kernel_cache/Ascend910B4/te_add_1.o"), b"k" * 5000, mtime=OLD)
    write(str(home / "atc_data/kernel_cache/op_cache.ini"), b"[op_compiler_cache]\n", mtime=OLD)
    write(str(home / "ascend/log/debug/plog/plog-1.log"), b"log", mtime=OLD)
    write(str(home / "Ascend/latest/data/aoe/custom/op/Ascend910B4/bank.bin"), b"tuned", mtime=OLD)
    write(str(home / "proj/src/add.cpp"), b"int main(){}", mtime=OLD)
    write(str(home / "proj/build/job/kernel_meta/add.o"), b"m", mtime=OLD)
    write(str(tmp_path / "precious/x"), b"precious", mtime=OLD)
    os.symlink(tmp_path / "precious", home / "atc_data/kernel_cache/Ascend910B4/escape")
    os.utime(home / "atc_data/kernel_cache/Ascend910B4/escape", (OLD, OLD), follow_symlinks=False)
    facts = MachineFacts(canns=(CannRecord("8.1.RC1", "/usr/local/Ascend/ascend-toolkit/8.1.RC1", INSTALL),),
                         vendors=(VendorRecord("mine", "/opp/vendors/mine", INSTALL, ("ascend910b",)),))
    monkeypatch.setattr(clean_cache, "gather_machine_facts", lambda *a, **k: facts)
    return home


def run(home, *argv, interactive=False):
    out, err = io.StringIO(), io.StringIO()
    ctx = cli.Context(environ={"HOME": str(home)}, out=Output(stdout=out, stderr=err, interactive=interactive),
                      cwd=str(home / "proj"))
    # every file here was just written (ctime now): keep nothing for being recent
    code = cli.main(["clean-cache", "--recent", "0s", *argv], ctx=ctx)
    return code, out.getvalue(), err.getvalue()


def test_ls_json_schema(home):
    code, out, _ = run(home, "ls", "--format", "json", "--path", str(home / "proj"))
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == 1 and data["mode"] == "ls"
    assert set(data) == {"schema", "mode", "size_unit", "scan_seconds", "entries", "warnings"}
    kinds = {e["kind"]: e for e in data["entries"]}
    assert set(kinds) == {"kernel-cache", "log", "aoe-bank", "kernel-meta"}
    kc = kinds["kernel-cache"]
    assert set(kc) == {"kind", "path", "root", "source", "size", "apparent_size", "files", "dirs", "newest", "oldest",
                       "age_seconds", "soc", "cann_version", "stale", "stale_reasons", "protected", "in_use",
                       "kept_files", "kept_size", "errors"}
    assert (kc["soc"], kc["files"], kc["stale"], kc["source"]) == ("Ascend910B4", 2, True, "default $HOME/atc_data")
    assert kc["newest"] == "1970-01-12T13:46:40+00:00"  # 1e6 s after the epoch, read by eye
    assert kinds["aoe-bank"]["protected"]
    assert kinds["kernel-meta"]["path"] == str(home / "proj/build/job/kernel_meta")


def test_not_interactive_without_yes_refuses_and_deletes_nothing(home, tmp_path):
    before = tree_digest(tmp_path)
    code, _, err = run(home)
    assert code == errors.EXIT_USAGE and "--yes" in err
    assert tree_digest(tmp_path) == before


def test_dry_run_says_what_it_would_free(home, tmp_path):
    before = tree_digest(tmp_path)
    code, out, err = run(home, "--dry-run", "--format", "json")
    plan = json.loads(out)["plan"]
    assert code == 0 and plan["files"] == 2 and plan["entries"] == [str(home / "atc_data/kernel_cache/Ascend910B4")]
    code, _, err = run(home, "--dry-run")
    assert "would free" in err and "Dry run: nothing was deleted." in err
    assert tree_digest(tmp_path) == before


def test_yes_deletes_journals_and_a_second_run_has_nothing_to_do(home, tmp_path):
    keep = {p: tree_digest(p) for p in (tmp_path / "precious", home / "proj/src", home / "ascend", home / "Ascend")}
    code, out, _ = run(home, "--yes", "--format", "json", "--path", str(home / "proj"))
    result = json.loads(out)["result"]
    assert code == 0 and result["files"] == 3 and result["errors"] == []
    assert not (home / "proj/build/job/kernel_meta").exists()
    assert (home / "atc_data/kernel_cache/op_cache.ini").exists()
    assert {p: tree_digest(p) for p in keep} == keep
    journal = home / ".local/state/ascenv/clean-cache.jsonl"
    assert [json.loads(line)["kind"] for line in journal.read_text().splitlines()] == ["kernel-cache", "kernel-meta"]
    code, out, _ = run(home, "--yes", "--format", "json", "--path", str(home / "proj"))
    assert json.loads(out)["plan"] == {"entries": [], "size": 0, "files": 0, "skipped": []}


def test_interactive_confirmation_no_keeps_everything(home, tmp_path, monkeypatch):
    monkeypatch.setattr(Output, "confirm", lambda self, question: False)
    before = tree_digest(tmp_path)
    code, _, err = run(home, interactive=True)
    assert code == 0 and "Nothing was deleted." in err
    assert tree_digest(tmp_path) == before


def test_filters_on_the_command_line(home):
    code, out, _ = run(home, "--dry-run", "--format", "json", "--kind", "log", "--older-than", "7d")
    assert json.loads(out)["plan"]["entries"] == [str(home / "ascend/log/debug")]
    code, out, _ = run(home, "--dry-run", "--format", "json", "--soc", "ascend310p")
    assert json.loads(out)["plan"]["entries"] == []
    code, _, err = run(home, "--dry-run", "--older-than", "soon")
    assert code == errors.EXIT_USAGE and "90s, 30m" in err
