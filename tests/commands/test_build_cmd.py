"""`ascenv build`, `ascenv store` and `ascenv install` through cli.main: a real build of the CPU
target into the project's default store, the store commands on it, and `install` of an NPU
package (a fake makeself `.run` that records how it was called: no CANN package here)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from ascenv import errors, lockfile, store
from ascenv.probe.fs import Root
from ascenv.probe.vendors import probe_vendors
from tests.cli_helpers import run_cli
from tests.package import pkgbuild
from tests.package.pkgbuild import cann_header, make_package, needs_makeself
from tests.test_builder import make_project
from tests.test_store import add_entry

REPO = Path(__file__).resolve().parents[2]


def ascenv(cwd: Path, *argv: str, environ=None) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    return run_cli(argv, {"PATH": os.environ.get("PATH", ""), **(environ or {})}, cwd)


@pytest.fixture
def project(tmp_path: Path, builder_image: str) -> Path:  # noqa: F811
    return make_project(tmp_path / "project", builder_image)


@pytest.mark.engine
@pytest.mark.live_host  # the manifest's host summary probes this machine (read only)
def test_build_then_hit_then_store_commands(project: Path) -> None:
    code, out, err = ascenv(project, "build", "add_custom", "--format", "json")
    assert code == 0, err
    built = json.loads(out)
    assert (built["op"], built["target"], built["reused"]) == ("add_custom", "cpu", False)
    assert built["path"] == str(project / ".ascenv" / "store" / "add_custom" / built["key"])
    assert "is not in git and its recipe sets no source_date_epoch: using SOURCE_DATE_EPOCH=0" in err
    assert "make: Entering directory '/ascenv/src/cpu'" in err  # the log, streamed
    manifest = store.loads_manifest((Path(built["path"]) / "manifest.toml").read_text(), "manifest.toml")
    assert manifest.host["arch"] and manifest.source_date_epoch == 0

    code, out, err = ascenv(project, "build", "add_custom")
    assert code == 0 and out.startswith(
        f"store hit: add_custom (cpu) {built['key'][:12]}, outputs verified, nothing built"
    )

    code, out, _ = ascenv(project, "store", "ls", "--format", "json")
    listed = json.loads(out)["builds"]
    assert code == 0 and [(b["key"], b["ok"]) for b in listed] == [(built["key"], True)]
    code, out, _ = ascenv(project, "store", "show", built["key"][:8])
    assert code == 0 and f'key = "{built["key"]}"' in out and "[toolchain.versions]" in out

    binary = Path(built["path"]) / "outputs" / "add_custom_cpu"
    binary.chmod(0o755)
    binary.write_bytes(b"tampered")
    code, out, _ = ascenv(project, "store", "ls")
    assert code == errors.EXIT_FINDINGS and "outputs/add_custom_cpu: sha256" in out


@pytest.mark.engine
@pytest.mark.live_host  # the manifest's host summary probes this machine (read only)
def test_a_build_on_an_engine_without_its_image_bootstraps_it_as_pinned(tmp_path: Path, engine, bootstraps) -> None:
    """The whole path a new user takes: the pinned image is absent, `ascenv build` bootstraps it,
    it equals its pin, the operator is built in it. The recipe gets an env entry of its own, so its
    image ID (the hash of the config, which holds the env) is this test's alone and removing it
    disturbs no one; the pin comes from a first bootstrap today (`image build` + `image pin`), as
    the Debian mirror may have moved since containers/pins.toml was written."""
    from ascenv.containers import images
    from ascenv.containers.pins import load_pins
    from ascenv.containers.recipe import load_recipe

    project = make_project(tmp_path / "project", "sha256:" + "0" * 64)
    containers = project / "containers"
    image_toml = containers / "builder-bookworm" / "image.toml"
    image_toml.write_text(image_toml.read_text() + f'\n[env]\nASCENV_TEST_ID = "{uuid.uuid4().hex}"\n')
    (containers / "pins.toml").unlink()  # unpinned until `image pin` below
    environ = {"ASCENV_CACHE_DIR": str(bootstraps.cache), "HOME": str(tmp_path)}
    environ.update({k: os.environ[k] for k in ("DOCKER_HOST",) if k in os.environ})
    pinned = None
    try:
        code, _, err = ascenv(
            project, "image", "build", "builder-bookworm", "--containers", "containers", environ=environ
        )
        assert code == 0, err
        code, _, err = ascenv(
            project, "image", "pin", "builder-bookworm", "--containers", "containers", environ=environ
        )
        assert code == 0, err
        pin = load_pins(containers / "pins.toml")["builder-bookworm"]
        pinned = pin.image_id
        assert (
            pinned is not None and pinned != load_pins(REPO / "containers" / "pins.toml")["builder-bookworm"].image_id
        )
        engine.remove_image(pinned)  # this test's image only (see the docstring)
        assert engine.image(pinned) is None

        code, out, err = ascenv(project, "build", "add_custom", "--format", "json", environ=environ)
        assert code == 0, err
        assert f"the pinned image builder-bookworm ({pinned}) is not in the engine: bootstrapping it" in err
        assert "bootstrapping builder-bookworm: mmdebstrap bookworm/apt" in err  # the progress of the bootstrap
        recipe = load_recipe(containers, "builder-bookworm")
        assert images.status(recipe, pin, engine).state == images.OK  # present, and exactly the pinned image
        built = json.loads(out)
        manifest = store.loads_manifest((Path(built["path"]) / "manifest.toml").read_text(), "manifest.toml")
        assert built["reused"] is False and manifest.toolchain.image_id == pinned
    finally:
        if pinned is not None:
            engine.remove_image(pinned)


@pytest.mark.engine
def test_an_unpinned_image_is_refused(project: Path) -> None:
    (project / "containers" / "pins.toml").unlink()
    code, _, err = ascenv(project, "build", "add_custom")
    assert code == errors.EXIT_USAGE
    assert "the image 'builder-bookworm' has no pin in" in err and "ascenv builds only from pinned images" in err


def test_an_unknown_target_or_project_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = ascenv(tmp_path, "build", "add_custom", "--target", "gpu")
    assert code == errors.EXIT_USAGE and "has no target 'gpu'" in err and "targets: cpu, npu" in err
    code, _, err = ascenv(tmp_path, "build", "nope")
    assert code == errors.EXIT_USAGE and "no operator project 'nope'" in err


def test_store_gc_keeps_what_the_lock_references(tmp_path: Path) -> None:
    st = store.Store(tmp_path / "elsewhere")
    old = add_entry(st, "add_custom", "a" * 64, target="npu", finished="2026-01-01T00:00:00Z")
    add_entry(st, "add_custom", "b" * 64, target="npu", finished="2026-01-02T00:00:00Z")
    vendor = lockfile.LockedVendor("customize", "/opp/vendors/customize", 0, manifest_digest=old.manifest_sha256)
    lock = lockfile.Lock(vendors=(vendor,))
    (tmp_path / "ascenv.lock").write_text(lockfile.dumps_lock(replace(lock, input_hash=lockfile.input_hash(lock))))
    code, out, err = ascenv(
        tmp_path, "store", "gc", "--keep", "0", "--format", "json", environ={"ASCENV_STORE": "elsewhere"}
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["removed"] == ["add_custom/" + "b" * 64]
    assert result["kept_referenced"] == ["add_custom/" + "a" * 64]
    code, _, err = ascenv(tmp_path, "store", "gc", "--store", "elsewhere")
    assert code == errors.EXIT_USAGE and "needs --keep N" in err


def npu_package(tmp_path: Path, install_sh: str) -> bytes:
    """A custom_opp_<os>_<arch>.run made by makeself (tests.package.pkgbuild), CANN's header."""
    work = tmp_path / f"pkg-{uuid.uuid4().hex[:8]}"
    return cann_header(make_package(work, tmp_path / "canary", install_sh=install_sh)).read_bytes()


# install.sh that also records its arguments
RECORDING_INSTALL_SH = pkgbuild.INSTALL_SH.replace(
    'echo ran > "{canary}"\n', 'echo ran > "{canary}"\necho "$@" >> "{canary}.calls"\n'
)


@needs_makeself
def test_install_uses_install_path_and_records_the_manifest_in_the_vendor(tmp_path: Path) -> None:
    calls = tmp_path / "canary.calls"
    st = store.Store(tmp_path / ".ascenv" / "store")
    entry = add_entry(
        st,
        "add_custom",
        "c" * 64,
        target="npu",
        outputs={"custom_opp_ubuntu_aarch64.run": npu_package(tmp_path, RECORDING_INSTALL_SH)},
    )
    code, out, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == 0, err
    root = tmp_path / "opp"
    assert calls.read_text().splitlines() == [f"--install-path={root}"]  # never --check, never --list
    recorded = root / "vendors" / "customize" / "ascenv-manifest.toml"
    assert recorded.read_bytes() == (entry.path / "manifest.toml").read_bytes()
    assert f"manifest recorded: {recorded}" in out
    # the vendors probe (what doctor and lock read), over tmp_path as the root file system
    vendors, _ = probe_vendors(Root(str(tmp_path)), {"ASCEND_CUSTOM_OPP_PATH": "/opp/vendors/customize"}, None)
    assert vendors[0].manifest == "/opp/vendors/customize/ascenv-manifest.toml"
    assert vendors[0].manifest_digest == hashlib.sha256((entry.path / "manifest.toml").read_bytes()).hexdigest()
    assert vendors[0].version_info == {"custom_opp_compiler_version": "7.7.0.1.238"}


@needs_makeself
def test_install_refuses_a_cpu_only_store_a_package_that_is_none_and_a_failing_installer(tmp_path: Path) -> None:
    st = store.Store(tmp_path / ".ascenv" / "store")
    add_entry(st, "add_custom", "d" * 64, target="cpu")
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == errors.EXIT_USAGE and "has no npu build of 'add_custom'" in err
    script = f"echo ran > {tmp_path / 'ran'}\n".encode()  # no makeself header: read, never run
    add_entry(st, "add_custom", "e" * 64, target="npu", outputs={"custom_opp.run": script})
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == errors.EXIT_USAGE and "is not a makeself package" in err and not (tmp_path / "ran").exists()
    failing = pkgbuild.INSTALL_SH.replace('echo "SUCCESS"', "echo broken >&2; exit 4")
    add_entry(st, "add_custom", "f" * 64, target="npu", outputs={"custom_opp.run": npu_package(tmp_path, failing)})
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--key", "f" * 6, "--install-path", "opp")
    assert code == errors.EXIT_BUILD_FAILED and "the installer of custom_opp.run failed" in err and "broken" in err


# an absent pinned image: fetched as pinned, or refused with --no-fetch ---------------------------
PINNED = "sha256:" + "1" * 64


class AbsentImageEngine:
    """An engine holding no image until one is "loaded" (the bootstrap is faked alongside)."""

    host, arch = "unix:///fake.sock", "amd64"

    def __init__(self) -> None:
        from ascenv.containers.engine import ImageInfo

        self.info = ImageInfo
        self.present: dict = {}
        self.runs: list = []

    def image(self, ref: str):  # type: ignore[no-untyped-def]
        return self.present.get(ref)

    def images(self, labels):  # type: ignore[no-untyped-def]
        return []

    def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.runs.append(args)
        raise AssertionError("nothing may be built")


@pytest.fixture
def absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A project pinned to PINNED (cmake 3.25.1-1), an engine without it, and a fake bootstrap
    that loads the image ``bootstrapped`` names (PINNED unless a test changes it)."""
    from ascenv.containers import bootstrap, images
    from ascenv.containers import engine as engine_mod
    from ascenv.containers.pins import Pin, save_pins
    from ascenv.containers.recipe import load_recipe

    project = make_project(tmp_path / "project", PINNED)
    recipe = load_recipe(project / "containers", "builder-bookworm")
    save_pins(
        project / "containers" / "pins.toml",
        {"builder-bookworm": Pin("bootstrap", recipe.sha256, "amd64", image_id=PINNED, packages={"cmake": "3.25.1-1"})},
    )
    engine = AbsentImageEngine()
    bootstrapped = {"id": PINNED, "packages": {"cmake": "3.25.1-1"}, "calls": 0}

    def fake_bootstrap(recipe, engine_, host, save=None):  # type: ignore[no-untyped-def]
        bootstrapped["calls"] += 1
        engine.present[bootstrapped["id"]] = engine.info(bootstrapped["id"])
        return bootstrap.ImageArchive(
            bootstrapped["id"],
            "sha256:" + "d" * 64,
            "ascenv/builder-bookworm:x",
            Path("x"),
            0,
            bootstrapped["packages"],
        )

    monkeypatch.setattr(engine_mod, "connect", lambda environ: engine)
    monkeypatch.setattr(images, "bootstrap_image", fake_bootstrap)
    return project, engine, bootstrapped


def test_no_fetch_refuses_an_absent_image_with_its_own_exit_code(absent, tmp_path: Path) -> None:
    project, engine, bootstrapped = absent
    code, _, err = ascenv(project, "build", "add_custom", "--no-fetch", environ={"ASCENV_CACHE_DIR": str(tmp_path)})
    assert code == errors.EXIT_IMAGE_UNAVAILABLE == 10  # not 1, the code of findings and drift
    assert f"the pinned image builder-bookworm ({PINNED}) is not present in the engine at unix:///fake.sock" in err
    assert "run without --no-fetch to bootstrap it" in err
    assert bootstrapped["calls"] == 0 and engine.runs == []


def test_an_absent_image_that_bootstraps_unlike_its_pin_builds_nothing(absent, tmp_path: Path) -> None:
    project, engine, bootstrapped = absent
    bootstrapped.update(id="sha256:" + "2" * 64, packages={"cmake": "3.25.1-2"})
    code, _, err = ascenv(project, "build", "add_custom", environ={"ASCENV_CACHE_DIR": str(tmp_path)})
    assert code == errors.EXIT_NOT_REPRODUCIBLE
    assert f"the pinned image builder-bookworm ({PINNED}) is not in the engine: bootstrapping it" in err
    assert f"but pins.toml has {PINNED} (cmake: pinned 3.25.1-1, present 3.25.1-2)" in err
    assert bootstrapped["calls"] == 1 and engine.runs == []
    assert not (project / ".ascenv" / "store" / "add_custom").exists()


def test_an_absent_registry_image_is_pulled_by_its_pinned_digest(tmp_path: Path) -> None:
    from ascenv import builder
    from ascenv.containers import images
    from ascenv.containers.engine import ImageInfo
    from ascenv.containers.pins import Pin, save_pins
    from ascenv.containers.recipe import load_recipe
    from tests.engine_fixtures import CONTAINERS

    name = "cann-8.1.rc1-910b"
    containers = tmp_path / "containers"
    recipe = load_recipe(CONTAINERS, name)
    ref = f"{recipe.registry.repository}@sha256:{'3' * 64}"  # type: ignore[union-attr]
    shutil.copytree(CONTAINERS / name, containers / name)
    save_pins(containers / "pins.toml", {name: Pin("registry", recipe.sha256, "arm64", ref=ref)})

    class Registry(AbsentImageEngine):
        def pull(self, wanted: str) -> ImageInfo:
            self.pulled = wanted
            return ImageInfo("sha256:" + "4" * 64)

    engine = Registry()
    events: list[str] = []
    fetch = images.Host(environ={}, cache=tmp_path, on_event=events.append)
    pinned = builder.resolve_image(containers, name, engine, fetch)  # type: ignore[arg-type]
    assert engine.pulled == ref and pinned == builder.PinnedImage(name, ref, "sha256:" + "4" * 64)
    assert events == [f"the pinned image {name} ({ref}) is not in the engine: pulling it", f"pulling {ref}"]
    with pytest.raises(errors.ImageNotAvailable, match="fetching is off"):
        builder.resolve_image(containers, name, Registry(), None)  # type: ignore[arg-type]


def test_store_sub_commands_need_what_they_act_on(tmp_path: Path) -> None:
    code, _, err = ascenv(tmp_path, "store", "show")
    assert code == errors.EXIT_USAGE and "ascenv store show needs a KEY" in err
    code, out, err = ascenv(tmp_path, "store", "ls", "--format", "json")
    listing = json.loads(out)
    assert code == 0 and listing["store"] == str(tmp_path / ".ascenv" / "store")
    assert listing["exists"] is False and listing["builds"] == [] and listing["not_builds"] == []
    assert not (tmp_path / ".ascenv").exists()  # listing never creates a store
