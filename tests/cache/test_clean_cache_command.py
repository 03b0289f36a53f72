"""ascenv clean-cache end to end, on a fake home; the machine facts are injected."""

import json
import os

import pytest

from ascenv import errors
from ascenv.cache.entry import CannRecord, VendorRecord
from ascenv.cache.machine import MachineFacts
from ascenv.commands import clean_cache
from ascenv.output import Output
from tests.cache.helpers import tree_digest, write
from tests.cli_helpers import run_cli

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
    facts = MachineFacts(
        canns=(CannRecord("8.1.RC1", "/usr/local/Ascend/ascend-toolkit/8.1.RC1", INSTALL),),
        vendors=(VendorRecord("mine", "/opp/vendors/mine", INSTALL, ("ascend910b",)),),
    )
    monkeypatch.setattr(clean_cache, "gather_machine_facts", lambda *a, **k: facts)
    return home


def run(home, *argv, interactive=False, environ=None, cwd=None):
    # no engine unless a test gives one: the machine's engine holds other sessions' containers
    environ = {"HOME": str(home), "DOCKER_HOST": f"unix://{home}/no-engine.sock", **(environ or {})}
    # every file here was just written (ctime now): keep nothing for being recent
    return run_cli(["clean-cache", "--recent", "0s", *argv], environ, cwd or home / "proj", interactive)


def test_ls_json_schema(home):
    code, out, _ = run(home, "ls", "--format", "json", "--path", str(home / "proj"))
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == 1 and data["mode"] == "ls"
    assert set(data) == {"schema", "mode", "size_unit", "scan_seconds", "entries", "warnings"}
    kinds = {e["kind"]: e for e in data["entries"]}
    assert set(kinds) == {"kernel-cache", "log", "aoe-bank", "kernel-meta"}
    kc = kinds["kernel-cache"]
    assert set(kc) == {
        "kind",
        "path",
        "root",
        "source",
        "size",
        "apparent_size",
        "files",
        "dirs",
        "newest",
        "oldest",
        "age_seconds",
        "soc",
        "cann_version",
        "stale",
        "stale_reasons",
        "protected",
        "in_use",
        "kept_files",
        "kept_size",
        "kept",
        "errors",
    }
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
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [(r["action"], r["kind"]) for r in lines] == [
        ("begin", "kernel-cache"),
        ("remove", "kernel-cache"),
        ("begin", "kernel-meta"),
        ("remove", "kernel-meta"),
    ]
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


# ascenv's build store ----------------------------------------------------------------------------


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def build_store(home):
    """Three builds of add_custom (a lock references the oldest), a staging directory of a dead
    process and one of this live process, in the project's default store."""
    from dataclasses import replace

    from ascenv import lockfile
    from ascenv.store import TMP, Store, this_host
    from tests.test_store import add_entry

    st = Store(home / "proj/.ascenv/store")
    old, middle, new = (
        add_entry(st, "add_custom", k * 64, finished=f"2026-01-0{i}T00:00:00Z")
        for i, k in ((1, "a"), (2, "b"), (3, "c"))
    )
    vendor = lockfile.LockedVendor("customize", "/opp/vendors/customize", 0, manifest_digest=old.manifest_sha256)
    lock = lockfile.Lock(vendors=(vendor,))
    (home / "proj/ascenv.lock").write_text(lockfile.dumps_lock(replace(lock, input_hash=lockfile.input_hash(lock))))
    dead = st.root / TMP / f"build-add_custom.{this_host()}.pid{_dead_pid()}.x1"
    live = st.root / TMP / f"build-add_custom.{this_host()}.pid{os.getpid()}.x2"
    for d in (dead, live):
        (d / "out").mkdir(parents=True)
        (d / "out/partial.o").write_bytes(b"half")
    return st, old, middle, new, dead, live


def test_store_debris_is_listed_and_removed_through_the_store(home, build_store):
    st, old, middle, new, dead, live = build_store
    code, out, err = run(home, "ls", "--kind", "ascenv-store", "--keep-builds", "1", "--format", "json")
    assert code == 0, err
    listed = {e["path"]: e for e in json.loads(out)["entries"]}
    assert set(listed) == {str(dead), str(middle.path)}  # not the newest (kept), the oldest (locked), the live staging
    assert listed[str(dead)]["files"] == 1 and listed[str(dead)]["source"].endswith("staging of a process that is gone")
    assert listed[str(middle.path)]["source"].endswith("beyond the 1 newest builds of add_custom")

    code, out, err = run(home, "--yes", "--kind", "ascenv-store", "--keep-builds", "1", "--format", "json")
    assert code == 0 and json.loads(out)["result"]["errors"] == [], err
    assert [e.key for e in st.entries()] == [new.key, old.key]
    assert st.verify(st.get("add_custom", old.key)) == [] and not dead.exists() and live.exists()
    code, out, _ = run(home, "--yes", "--kind", "ascenv-store", "--keep-builds", "1", "--format", "json")
    assert json.loads(out)["plan"]["entries"] == []


def test_store_debris_with_recent_files_waits(home, build_store):
    st, old, middle, new, dead, live = build_store
    code, out, _ = run(
        home, "--dry-run", "--kind", "ascenv-store", "--keep-builds", "1", "--recent", "1h", "--format", "json"
    )
    plan = json.loads(out)["plan"]
    assert plan["entries"] == []
    reasons = {s["path"]: s["reason"] for s in plan["skipped"]}
    assert sorted(reasons) == sorted([str(dead), str(middle.path)])
    for path, reason in reasons.items():  # the rule, and a file of that build or staging directory
        assert reason.startswith("in use: a build goes whole, and it keeps ") and "modified within --recent" in reason
        assert f": {path}/" in reason


def test_a_lock_named_on_the_command_line_protects_its_build(home, build_store, tmp_path):
    st, old, middle, new, dead, live = build_store
    (home / "proj/ascenv.lock").rename(tmp_path / "elsewhere.lock")
    code, out, _ = run(home, "ls", "--kind", "ascenv-store", "--keep-builds", "1", "--format", "json")
    assert {e["path"] for e in json.loads(out)["entries"]} == {str(dead), str(middle.path), str(old.path)}
    code, out, _ = run(
        home,
        "ls",
        "--kind",
        "ascenv-store",
        "--keep-builds",
        "1",
        "--format",
        "json",
        "--lock",
        str(tmp_path / "elsewhere.lock"),
    )
    assert {e["path"] for e in json.loads(out)["entries"]} == {str(dead), str(middle.path)}


# containers and images labelled ascenv.* ---------------------------------------------------------


def test_without_an_engine_the_scan_runs_and_says_so(home):
    code, out, err = run(home, "ls", "--format", "json", "--kind", "all")
    data = json.loads(out)
    assert code == 0 and {e["kind"] for e in data["entries"]} == {"kernel-cache", "log", "aoe-bank"}
    note = (
        "containers and images labelled ascenv.* not listed: no Docker engine answers at "
        f"unix://{home}/no-engine.sock (No such file or directory)"
    )
    assert data["warnings"] == [note] and note in err
    code, out, _ = run(home, "--dry-run", "--kind", "container", "--format", "json")
    assert code == 0 and json.loads(out)["plan"]["entries"] == []


@pytest.mark.parametrize(
    "argv", [("ls",), ("--dry-run",), ("--yes",), ("ls", "--kind", "log"), ("--kind", "dump", "--yes")]
)
def test_the_engine_is_contacted_only_when_containers_are_asked_for(home, monkeypatch, argv):
    import ascenv.containers.engine as engine_module

    def connect(*args, **kwargs):
        raise AssertionError("the engine was contacted")

    monkeypatch.setattr(engine_module, "connect", connect)
    code, out, err = run(home, *argv, "--format", "json")
    assert code == 0, err
    assert not any("containers" in w for w in json.loads(out)["warnings"])


@pytest.mark.engine
def test_stopped_container_and_unpinned_image_are_removed_a_pinned_image_is_not(
    home, engine, builder_image, monkeypatch
):
    import functools
    import uuid

    from ascenv.cache import containers
    from ascenv.containers import MANAGED_LABEL
    from ascenv.containers.pins import Pin, save_pins

    scope = {"ascenv.test-id": uuid.uuid4().hex}  # other sessions share this engine: touch only ours
    monkeypatch.setattr(containers, "EngineObjects", functools.partial(containers.EngineObjects, scope=scope))
    stopped = engine.client.containers.create(
        builder_image, ["true"], labels={MANAGED_LABEL: "true", **scope}, network_disabled=True
    )
    images = []
    try:
        stopped.start()
        assert stopped.wait(timeout=60)["StatusCode"] == 0
        for name in ("unpinned", "pinned"):
            images.append(
                stopped.commit(
                    repository=f"ascenv-test/{name}",
                    tag=scope["ascenv.test-id"],
                    conf={"Labels": {**scope, "ascenv.test": name}},
                )
            )
        unpinned, pinned = (i.id for i in images)
        assert unpinned != pinned
        save_pins(home / "proj/containers/pins.toml", {"test": Pin("bootstrap", "0" * 64, "amd64", image_id=pinned)})
        docker = {"DOCKER_HOST": os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")}

        code, out, err = run(
            home, "--dry-run", "--kind", "container", "--recent", "10m", "--format", "json", environ=docker
        )
        skipped = {s["path"]: s["reason"] for s in json.loads(out)["plan"]["skipped"]}
        assert code == 0 and json.loads(out)["plan"]["entries"] == [], err
        assert skipped == {
            f"container:{stopped.name}": "in use: created in the last minutes (a build may be starting it)",
            f"image:{unpinned}": "in use: created in the last minutes (a build may be starting it)",
            f"image:{pinned}": "never deleted: pinned in containers/pins.toml",
        }

        code, out, err = run(home, "--yes", "--kind", "container", "--format", "json", environ=docker)
        data = json.loads(out)
        assert code == 0 and data["result"]["errors"] == [], err
        assert data["plan"]["entries"] == [f"container:{stopped.name}", f"image:{unpinned}"]
        assert engine.containers(scope) == [] and engine.image(unpinned) is None
        assert engine.image(pinned) is not None
        code, out, _ = run(home, "--yes", "--kind", "container", "--format", "json", environ=docker)
        assert json.loads(out)["plan"]["entries"] == []
    finally:
        for image in images:
            engine.remove_image(image.id)
        if engine.containers(scope):
            engine.client.api.remove_container(stopped.id, force=True)


@pytest.mark.engine
def test_the_shipped_pinned_builder_image_is_never_planned(home, engine, builder_image):
    from ascenv.containers.pins import load_pins
    from ascenv.paths import data_dir

    if load_pins(data_dir("containers") / "pins.toml")["builder-bookworm"].image_id != builder_image:
        pytest.skip("the engine holds another builder-bookworm than the pinned one")
    docker = {"DOCKER_HOST": os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")}
    code, out, err = run(home, "--dry-run", "--kind", "container", "--format", "json", environ=docker)
    plan = json.loads(out)["plan"]
    assert code == 0 and f"image:{builder_image}" not in plan["entries"], err
    assert {s["path"]: s["reason"] for s in plan["skipped"]}[
        f"image:{builder_image}"
    ] == "never deleted: pinned in containers/pins.toml"


class ListingEngine:
    """An engine that lists these labelled images and no container (never the shared daemon)."""

    host = "unix:///fake/docker.sock"

    def __init__(self, images):
        self.listed = images

    def container_infos(self, labels):
        return []

    def images_labelled(self, prefix):
        return self.listed


@pytest.fixture
def team_pins(home, monkeypatch):
    """Another project's pins file pinning recipe opbuild by an ID this engine does not hold; the
    engine holds a rebuild of opbuild and an image of an unpinned recipe."""
    from ascenv.containers import engine as engine_mod
    from ascenv.containers.engine import ImageInfo
    from ascenv.containers.pins import Pin, save_pins

    path = home / "team/containers/pins.toml"
    path.parent.mkdir(parents=True)
    save_pins(path, {"opbuild": Pin("bootstrap", "a" * 64, "amd64", image_id="sha256:" + "1" * 64)})
    listed = [
        ImageInfo("sha256:" + "2" * 64, labels={"ascenv.recipe": "opbuild", "ascenv.managed": "true"}, size=1000),
        ImageInfo("sha256:" + "3" * 64, labels={"ascenv.recipe": "scratch", "ascenv.managed": "true"}, size=1000),
    ]
    monkeypatch.setattr(engine_mod, "connect", lambda environ, timeout: ListingEngine(listed))
    return path


def test_an_image_of_a_recipe_pinned_in_a_named_pins_file_is_kept(home, team_pins):
    from ascenv.paths import data_dir

    code, out, err = run(
        home, "--dry-run", "--kind", "container", "--pins", "../team/containers/pins.toml", "--format", "json"
    )
    plan = json.loads(out)["plan"]
    assert code == 0, err
    assert plan["entries"] == ["image:sha256:" + "3" * 64]
    assert {s["path"]: s["reason"] for s in plan["skipped"]} == {
        "image:sha256:" + "2" * 64: f"never deleted: built from recipe opbuild, pinned in {team_pins}"
    }
    assert plan["pins_files"] == [str(data_dir("containers") / "pins.toml"), str(team_pins)]
    code, out, err = run(home, "--dry-run", "--kind", "container", "--pins", str(team_pins))
    assert code == 0 and f"pins files read: {data_dir('containers') / 'pins.toml'}, {team_pins}" in out + err
    code, out, _ = run(home, "--dry-run", "--kind", "container", "--format", "json")  # not named: not protected
    assert json.loads(out)["plan"]["entries"] == ["image:sha256:" + "2" * 64, "image:sha256:" + "3" * 64]


def test_a_named_pins_file_that_is_missing_is_a_usage_error(home, team_pins):
    code, out, err = run(home, "--dry-run", "--kind", "container", "--pins", "typo.toml")
    assert code == errors.EXIT_USAGE and out == ""
    assert f"--pins {home / 'proj' / 'typo.toml'}: no such file" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("--kind", "log", "ls", "--format", "json"),
        ("ls", "--kind", "log", "--format", "json"),
        ("--format", "json", "--kind", "log", "ls"),
    ],
)
def test_ls_is_a_sub_command_whose_options_may_come_before_or_after_it(home, argv):
    code, out, _ = run(home, *argv)
    data = json.loads(out)
    assert code == 0 and data["mode"] == "ls" and {e["kind"] for e in data["entries"]} == {"log"}


def test_a_name_with_a_newline_or_an_escape_cannot_forge_plan_lines(home, tmp_path):
    forged = "job\nstale /home/you/thesis: holds kernels compiled before everything\x1b[2J"
    write(str(home / "proj/build" / forged / "kernel_meta/add.o"), b"m", mtime=OLD)
    code, out, err = run(home, "ls", "--path", str(home / "proj"))
    assert code == 0
    shown = out + err
    assert "\x1b" not in shown
    assert not any(line.lstrip().startswith("stale /home/you/thesis") for line in shown.splitlines())
    assert "\\n" in shown or "\\x0a" in shown  # the newline is shown, not sent
