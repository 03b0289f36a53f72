"""ascenv image build | ls | verify | pin against the real engine and the session's two builds; build
--save with mmdebstrap and the engine faked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.containers import bootstrap, images
from ascenv.containers import engine as engine_mod
from ascenv.containers.bootstrap import AptSource
from ascenv.containers.pins import Pin, load_pins, save_pins
from ascenv.containers.recipe import load_recipe
from tests.cli_helpers import run_cli
from tests.engine_fixtures import BUILDER, CONTAINERS

REPO = Path(__file__).resolve().parents[2]
WRONG = "sha256:" + "0" * 64


def image_cli(argv, tmp_path, pins: Path):
    environ = {**os.environ, "HOME": str(tmp_path), "ASCENV_CACHE_DIR": str(tmp_path / "cache")}
    return run_cli(["image", *argv, "--pins", str(pins)], environ)


@pytest.fixture
def pins(tmp_path, built):
    """A pins file holding the session's build, as `ascenv image pin` writes it."""
    path = tmp_path / "pins.toml"
    code, _, err = image_cli(["pin", BUILDER], tmp_path, path)
    assert code == 0, err
    return path


@pytest.mark.engine
def test_two_builds_give_the_same_image_id(built):
    assert not built.first.reused and not built.second.reused
    assert built.first.image_id == built.second.image_id
    assert (
        built.first.image_id.startswith("sha256:")
        and built.first.tag == f"ascenv/{BUILDER}:{built.first.image_id[7:19]}"
    )
    assert built.first.packages["cmake"] == "3.25.1-1" and built.first.packages["make"] == "4.3-4.1"
    # the minutes of mmdebstrap are announced, with the mirror read from the host's apt sources
    boot, done, write, load = built.first_events
    assert boot.startswith(f"bootstrapping {BUILDER}: mmdebstrap bookworm/") and " from http" in boot
    assert done.startswith(f"bootstrapping {BUILDER}: done in ")  # and how long it took (M:SS)
    assert write == "writing the image archive" and load == f"loading {built.first.image_id[:19]} into the engine"
    debs = list((built.cache / "images" / BUILDER / "debs").iterdir())
    assert debs and all(p.name.endswith(".deb") for p in debs)  # the second build read these
    assert [p.name for p in (built.cache / "images").iterdir()] == [BUILDER]  # no work dir left


@pytest.mark.engine
def test_pin_then_verify_then_reuse(built, pins, tmp_path):
    pin = load_pins(pins)[BUILDER]
    assert pin.image_id == built.first.image_id and pin.packages == built.first.packages
    code, out, _ = image_cli(["verify", BUILDER], tmp_path, pins)
    assert code == 0 and f"ok {BUILDER}: the present image is the pinned {built.first.image_id}" in out
    start = time.monotonic()
    code, out, _ = image_cli(["build", BUILDER, "--format", "json"], tmp_path, pins)
    assert code == 0 and time.monotonic() - start < 5  # a digest check, not a bootstrap
    assert json.loads(out)["reused"] is True and json.loads(out)["image_id"] == built.first.image_id


@pytest.mark.engine
def test_wrong_digest_in_the_pin_fails_verify_and_names_the_difference(built, pins, tmp_path):
    text = pins.read_text().replace(built.first.image_id, WRONG)
    text = text.replace('cmake = "3.25.1-1"', 'cmake = "3.25.0-1"')
    pins.write_text(text)
    code, out, _ = image_cli(["verify", BUILDER], tmp_path, pins)
    assert code == errors.EXIT_FINDINGS
    assert f"drifted {BUILDER}: pinned {WRONG}, present {built.first.image_id}" in out
    assert "cmake: pinned 3.25.0-1, present 3.25.1-1" in out
    code, out, _ = image_cli(["verify", BUILDER, "--format", "json"], tmp_path, pins)
    data = json.loads(out)
    assert (data["state"], data["pinned"], data["present"]) == ("drifted", WRONG, built.first.image_id)
    assert data["changes"] == [{"name": "cmake", "pinned": "3.25.0-1", "present": "3.25.1-1"}]


@pytest.mark.engine
def test_ls_shows_each_state(built, pins, tmp_path):
    code, out, _ = image_cli(["ls", "--format", "json"], tmp_path, pins)
    states = {i["name"]: i["state"] for i in json.loads(out)["images"]}
    assert code == 0 and states == {BUILDER: "ok", "cann-8.1.rc1-910b": "unpinned", "opp-packager-bookworm": "unpinned"}
    current = load_pins(pins)
    save_pins(pins, {BUILDER: current[BUILDER].__class__(**{**current[BUILDER].__dict__, "image_id": WRONG})})
    code, out, _ = image_cli(["ls", "--format", "json"], tmp_path, pins)
    assert {i["name"]: i["state"] for i in json.loads(out)["images"]}[BUILDER] == "drifted"


def test_unpinned_registry_image_is_refused_before_the_engine(tmp_path):
    environ = {"HOME": str(tmp_path), "DOCKER_HOST": f"unix://{tmp_path}/none.sock"}
    code, _, err = run_cli(["image", "build", "cann-8.1.rc1-910b", "--pins", str(tmp_path / "pins.toml")], environ)
    assert code == errors.EXIT_USAGE
    assert "cann-8.1.rc1-910b (quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10) has no pinned digest" in err
    assert "ascenv image pin cann-8.1.rc1-910b" in err


@pytest.mark.engine
def test_interrupted_bootstrap_leaves_no_work_dir_or_mount(bootstraps, tmp_path):
    cache = tmp_path / "cache"
    env = {**os.environ, "HOME": str(tmp_path), "ASCENV_CACHE_DIR": str(cache)}
    argv = [sys.executable, "-m", "ascenv", "image", "build", BUILDER, "--force", "--pins", str(tmp_path / "pins.toml")]
    with subprocess.Popen(
        argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            for _ in range(600):  # wait until mmdebstrap is writing the root filesystem
                if list(cache.glob("images/build-*/rootfs/usr")):
                    break
                time.sleep(0.1)
            assert list(cache.glob("images/build-*/rootfs/usr")), "the bootstrap never started"
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=120)
        finally:
            proc.kill()
    assert proc.returncode == errors.EXIT_INTERRUPTED, stderr
    assert "Traceback" not in stderr
    assert list(cache.glob("images/build-*")) == []
    assert str(cache) not in Path("/proc/mounts").read_text()


# --save, with mmdebstrap and the engine faked: no root, no daemon ---------------------------------
class LoadingEngine:
    """``load`` records what the --save directory holds meanwhile; ``answer`` is the ID it reports."""

    def __init__(self, watched: Path, answer=None):
        self.watched, self.answer, self.seen = watched, answer, None

    def load(self, archive: Path) -> list[str]:
        self.seen = sorted(p.name for p in self.watched.iterdir())
        with tarfile.open(archive) as tar:
            config = json.load(tar.extractfile("manifest.json"))[0]["Config"]
        return [self.answer or "sha256:" + config[: -len(".json")]]


def fake_bootstrap(tmp_path, monkeypatch):
    def mmdebstrap(boot, source, target, *_):
        (target / "etc").mkdir(parents=True)
        (target / "etc/hostname").write_text("builder\n")

    monkeypatch.setattr(bootstrap, "run_mmdebstrap", mmdebstrap)
    monkeypatch.setattr(bootstrap, "host_architecture", lambda run: "amd64")
    monkeypatch.setattr(
        bootstrap,
        "read_host_sources",
        lambda etc_apt: [AptSource("http://mirror.invalid/debian", ("bookworm",), ("main",), None, "test")],
    )
    return images.Host(environ={}, cache=tmp_path / "cache", is_root=True)


def test_save_appears_whole_after_the_load_and_nothing_else_beside_it(tmp_path, monkeypatch):
    host = fake_bootstrap(tmp_path, monkeypatch)
    save = tmp_path / "out" / "builder.tar"
    save.parent.mkdir()
    engine = LoadingEngine(save.parent)
    archive = images.bootstrap_image(load_recipe(CONTAINERS, BUILDER), engine, host, save)
    (temp,) = engine.seen  # while the engine loaded it, the archive was still a temp file
    assert temp.startswith(".ascenv-builder.tar.") and temp.endswith(".tmp")
    assert sorted(p.name for p in save.parent.iterdir()) == ["builder.tar"]  # no builder.tar.layer either
    assert archive.path == save
    with tarfile.open(save) as tar:
        assert json.load(tar.extractfile("manifest.json"))[0]["RepoTags"] == [archive.tag]


def test_a_failed_build_leaves_the_previous_saved_archive_alone(tmp_path, monkeypatch):
    host = fake_bootstrap(tmp_path, monkeypatch)
    save = tmp_path / "builder.tar"
    save.write_bytes(b"yesterday's archive")
    with pytest.raises(errors.BootstrapFailed):
        images.bootstrap_image(load_recipe(CONTAINERS, BUILDER), LoadingEngine(tmp_path, WRONG), host, save)
    assert save.read_bytes() == b"yesterday's archive"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["builder.tar", "cache"]


def test_save_and_pins_are_relative_to_the_command_cwd(tmp_path, monkeypatch):
    seen = {}

    def build(recipe, pin, engine, host, *, force=False, save=None):
        seen["save"], seen["pin"] = save, pin
        return images.BuildOutcome(recipe.name, WRONG, "t", False, 0.0, 0)

    monkeypatch.setattr(engine_mod, "connect", lambda environ: object())
    monkeypatch.setattr(images, "build", build)
    (tmp_path / "work").mkdir()
    save_pins(tmp_path / "work" / "pins.toml", {BUILDER: Pin("bootstrap", "0" * 64, "amd64", image_id=WRONG)})
    code, out, err = run_cli(
        ["image", "build", BUILDER, "--save", "b.tar", "--pins", "pins.toml", "--format", "json"],
        {"HOME": str(tmp_path)},
        tmp_path / "work",
    )
    assert code == 0, err
    assert seen["save"] == tmp_path / "work" / "b.tar" and seen["pin"].image_id == WRONG
