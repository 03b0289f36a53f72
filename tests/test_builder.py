"""ascenv.builder: the kernel.toml recipe, the build key, SOURCE_DATE_EPOCH, byte comparison, and
real builds of kernels/add_custom's CPU target in the pinned builder-bookworm container (marked
engine: they fail under CI=true when no engine answers, and skip elsewhere)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascenv import builder, errors, proc, store
from ascenv.errors import BuildFailed, DataFileError
from ascenv.store import Store

REPO = Path(__file__).resolve().parents[1]
KERNEL = REPO / "kernels" / "add_custom"
IMAGE = "builder-bookworm"


# helpers shared with tests/commands/test_build_cmd.py and bench/bench_build.py (the engine and
# builder_image fixtures are in tests/engine_fixtures.py) ------------------------------------------


def make_project(root: Path, image_id: str) -> Path:
    """A project like a user's: kernels/add_custom and containers/ with a pin for the image."""
    from ascenv.containers.pins import Pin, save_pins
    from ascenv.containers.recipe import load_recipe

    shutil.copytree(KERNEL, root / "kernels" / "add_custom")
    shutil.copytree(REPO / "containers" / IMAGE, root / "containers" / IMAGE)
    recipe = load_recipe(root / "containers", IMAGE)
    save_pins(root / "containers" / "pins.toml", {IMAGE: Pin("bootstrap", recipe.sha256, "amd64", image_id=image_id)})
    return root


@pytest.fixture
def project(tmp_path: Path, builder_image: str) -> Path:
    return make_project(tmp_path / "project", builder_image)


def request_for(project: Path, engine, *, sde: int = 1700000000) -> builder.Request:
    kernel = project / "kernels" / "add_custom"
    recipe = builder.load_recipe(kernel)
    image = builder.resolve_image(project / "containers", IMAGE, engine)
    return builder.Request(
        kernel, recipe, "cpu", image, "0.1.0", sde, "recipe", host=lambda: {"arch": "test"}, timeout=300
    )


def labelled_containers(engine, key: str) -> list:
    return engine.containers({builder.LABEL_KEY: key})


# the recipe --------------------------------------------------------------------------------------


def test_the_add_custom_recipe_loads() -> None:
    recipe = builder.load_recipe(KERNEL)
    assert (recipe.name, recipe.op_type, sorted(recipe.targets)) == ("add_custom", "AddCustom", ["cpu", "npu"])
    cpu = recipe.targets["cpu"]
    assert cpu.image == "builder-bookworm"
    assert cpu.outputs == ("add_custom_cpu", "add_custom_tiling")
    assert builder.expand(cpu.build) == ["make", "-C", "/ascenv/src/cpu", "OUT=/ascenv/out", "OBJ=/ascenv/work/obj"]
    assert [t.name for t in cpu.tests] == ["golden-8-cores", "golden-40-cores"]
    assert recipe.targets["npu"].outputs == ("custom_opp_*.run",)


@pytest.mark.parametrize("target", ["cpu", "npu"])
def test_every_target_of_add_custom_builds_in_a_pinned_offline_image(target: str) -> None:
    # #25 item 1: the npu target named an image with no recipe, so it could never build from a clone
    from ascenv.containers.pins import PINS_FILE, load_pins
    from ascenv.containers.recipe import load_recipe as load_image

    image = builder.load_recipe(KERNEL).targets[target].image
    recipe = load_image(REPO / "containers", image)  # exit 2 when there is none
    pin = load_pins(REPO / "containers" / PINS_FILE).get(image)
    assert recipe.kind == "bootstrap", f"{image} needs a registry: a fresh clone offline cannot build {target}"
    assert pin is not None and pin.recipe_sha256 == recipe.sha256 and pin.image_id, f"{image} is not pinned as is"


def write_recipe(tmp_path: Path, text: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "kernel.toml").write_text(text)
    return tmp_path


GOOD = (
    'schema = 1\nname = "x"\nop_type = "X"\n'
    '[targets.cpu]\nimage = "i"\nbuild = ["make", "OUT={out}"]\noutputs = ["a"]\n'
)


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            ("outputs = ", "output = "),
            r"kernel.toml: targets.cpu.output: unknown key \(perhaps you meant 'outputs'\?\)",
        ),
        (
            ('"OUT={out}"', '"OUT={dest}"'),
            r"kernel.toml: targets.cpu.build: unknown placeholder \{dest\} in 'OUT=\{dest\}'",
        ),
        (
            ('["a"]', '["../a"]'),
            r"kernel.toml: targets.cpu.outputs\[0\]: expected a path relative to \{out\}, found '../a'",
        ),
        (("schema = 1", "schema = 2"), "kernel.toml: schema: this ascenv reads schema 1, found 2"),
        (
            ('build = ["make", "OUT={out}"]', "build = []"),
            "kernel.toml: targets.cpu.build: expected a non-empty argv list",
        ),
        (('image = "i"', "image = 3"), "kernel.toml: targets.cpu.image: expected string, found integer 3"),
    ],
)
def test_recipe_errors_name_the_key_path(tmp_path: Path, edit: tuple, message: str) -> None:
    assert builder.load_recipe(write_recipe(tmp_path, GOOD)).targets["cpu"].image == "i"
    with pytest.raises(DataFileError, match=message):
        builder.load_recipe(write_recipe(tmp_path, GOOD.replace(*edit)))


# the key ---------------------------------------------------------------------------------------


def test_every_part_of_the_key_counts() -> None:
    parts = dict(
        source_digest="s",
        recipe_digest="r",
        target="cpu",
        image_id="sha256:1",
        ascenv_version="0.1.0",
        source_date_epoch=1,
    )
    base = builder.build_key(**parts)
    assert len(base) == 64 and builder.build_key(**parts) == base
    for name, other in [
        ("source_digest", "s2"),
        ("recipe_digest", "r2"),
        ("target", "npu"),
        ("image_id", "sha256:2"),
        ("ascenv_version", "0.1.1"),
        ("source_date_epoch", 2),
    ]:
        assert builder.build_key(**{**parts, name: other}) != base, name


def test_recipe_digest_ignores_tests_but_not_the_build(tmp_path: Path) -> None:
    recipe = builder.load_recipe(write_recipe(tmp_path, GOOD))
    with_test = builder.load_recipe(
        write_recipe(tmp_path, GOOD + '[[targets.cpu.tests]]\nname = "t"\nargv = ["{out}/a"]\n')
    )
    other_build = builder.load_recipe(write_recipe(tmp_path, GOOD.replace('"make"', '"gmake"')))
    assert builder.recipe_digest(recipe, "cpu") == builder.recipe_digest(with_test, "cpu")
    assert builder.recipe_digest(recipe, "cpu") != builder.recipe_digest(other_build, "cpu")


def test_source_date_epoch_from_git_then_recipe_then_zero(tmp_path: Path) -> None:
    recipe = builder.load_recipe(write_recipe(tmp_path / "k", GOOD))
    target = recipe.targets["cpu"]
    assert builder.source_date_epoch(tmp_path / "k", target) == (0, "default")
    with_sde = builder.load_recipe(write_recipe(tmp_path / "k", GOOD + "source_date_epoch = 1234\n")).targets["cpu"]
    assert builder.source_date_epoch(tmp_path / "k", with_sde) == (1234, "recipe")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "@1700000000 +0000",
        "GIT_COMMITTER_DATE": "@1700000123 +0000",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for argv in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-q", "-m", "x"]):
        assert proc.run(argv, timeout=30, cwd=str(tmp_path / "k"), env=env).ok
    seconds, origin = builder.source_date_epoch(tmp_path / "k", with_sde)
    assert seconds == 1700000123 and origin.startswith("git commit ") and len(origin) == len("git commit ") + 40


# comparison ------------------------------------------------------------------------------------


def test_first_difference_and_compare_trees(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    data = bytes(range(256)) * 1000
    (a / "same").write_bytes(data), (b / "same").write_bytes(data)
    (a / "diff").write_bytes(data), (b / "diff").write_bytes(data[:70000] + b"\xff" + data[70001:])
    (a / "short").write_bytes(b"abc"), (b / "short").write_bytes(b"abcd")
    (a / "only-a").write_bytes(b"x")
    assert builder.first_difference(a / "same", b / "same") is None
    assert builder.first_difference(a / "diff", b / "diff") == 70000
    assert builder.first_difference(a / "short", b / "short") == 3
    diffs = builder.compare_trees(a, b)
    assert [(d.path, d.detail) for d in diffs] == [
        ("only-a", "only in the first build"),
        ("diff", "first differing byte at offset 70000 (0x11170); 256000 vs 256000 bytes"),
        ("short", "first differing byte at offset 3 (0x3); 3 vs 4 bytes"),
    ]


def test_parse_toolchain() -> None:
    text = "gcc: gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nmake: GNU Make 4.3\ncann-compiler: 7.7.0.1.238\nnoise\n"
    assert builder.parse_toolchain(text) == {
        "gcc": "gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
        "make": "GNU Make 4.3",
        "cann-compiler": "7.7.0.1.238",
    }


def test_one_changed_byte_of_source_gives_a_new_key(tmp_path: Path) -> None:
    copy = tmp_path / "add_custom"
    shutil.copytree(KERNEL, copy)
    recipe = builder.load_recipe(copy)
    image = builder.PinnedImage(IMAGE, "sha256:" + "a" * 64, "sha256:" + "a" * 64)
    request = builder.Request(copy, recipe, "cpu", image, "0.1.0", 0, "default")
    before = builder.plan(request)
    kernel = copy / "op_kernel" / "add_custom.cpp"
    data = bytearray(kernel.read_bytes())
    data[100] ^= 0x01
    kernel.write_bytes(bytes(data))
    after = builder.plan(request)
    assert after.key != before.key and after.source_digest != before.source_digest
    assert [f.path for f in before.inputs if f not in after.inputs] == ["op_kernel/add_custom.cpp"]


# real builds -----------------------------------------------------------------------------------


@pytest.mark.engine
def test_cold_build_store_hit_and_verify(project: Path, engine, tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    request = request_for(project, engine)
    logs: list = []
    cold = builder.build(request, engine, st, on_log=logs.append)
    m = cold.entry.manifest
    assert not cold.reused and m is not None
    assert [o.path for o in m.outputs] == ["add_custom_cpu", "add_custom_tiling"]
    assert st.verify(cold.entry) == []
    assert "g++" in m.toolchain.versions and m.toolchain.versions["g++"].startswith("g++ (Debian 12.")
    assert m.env["SOURCE_DATE_EPOCH"] == "1700000000" and m.env["TZ"] == "UTC" and m.env["LC_ALL"] == "C"
    assert "make: Entering directory '/ascenv/src/cpu'" in "".join(logs)
    assert "make: Entering directory '/ascenv/src/cpu'" in (cold.entry.path / "logs" / "build.log").read_text()
    assert {f.path for f in m.inputs} >= {"kernel.toml", "op_kernel/add_custom.cpp", "cpu/Makefile"}
    # the stored binary is the real checker: run the recipe's golden test on it
    golden = request.recipe.targets["cpu"].tests[0]
    done = proc.run(builder.expand(golden.argv, {"out": str(cold.entry.outputs)}), timeout=120)
    assert done.ok and done.stdout.splitlines()[-1] == "SUMMARY pass=8 fail=0", done.describe()

    hit = builder.build(request, engine, st)
    assert hit.reused and hit.entry.key == cold.entry.key and hit.seconds < 1.0

    verified = builder.build(request, engine, st, verify=True)
    assert verified.verified and not verified.reused and verified.entry.key == cold.entry.key
    assert labelled_containers(engine, cold.entry.key) == []
    assert list((st.root / store.TMP).iterdir()) == []


@pytest.mark.engine
def test_a_tampered_output_is_detected_and_rebuilt(project: Path, engine, tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    request = request_for(project, engine)
    entry = builder.build(request, engine, st).entry
    binary = entry.outputs / "add_custom_tiling"
    good = binary.read_bytes()
    binary.chmod(0o755)
    binary.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    again = builder.build(request, engine, st)
    assert not again.reused and len(again.replaced) == 1
    assert again.replaced[0].startswith("outputs/add_custom_tiling: sha256 ")
    assert (again.entry.outputs / "add_custom_tiling").read_bytes() == good


@pytest.mark.engine
def test_a_failed_build_leaves_no_entry_and_keeps_its_log(project: Path, engine, tmp_path: Path) -> None:
    recipe_file = project / "kernels" / "add_custom" / "kernel.toml"
    text = recipe_file.read_text()
    recipe_file.write_text(
        text.replace(
            'build = ["make", "-C", "{src}/cpu", "OUT={out}", "OBJ={work}/obj"]',
            'build = ["sh", "-c", "echo broken tiling >&2; exit 3"]',
        )
    )
    st = Store(tmp_path / "store")
    request = request_for(project, engine)
    with pytest.raises(BuildFailed, match=r"exited 3 in builder-bookworm; last lines:\nbroken tiling") as caught:
        builder.build(request, engine, st)
    assert st.entries() == []
    saved = Path(caught.value.hint.split("the whole log is in ")[1].split(";")[0])
    assert saved.read_text() == "broken tiling\n"
    assert labelled_containers(engine, builder.plan(request).key) == []


@pytest.mark.engine
def test_the_build_cannot_reach_the_network_or_write_the_sources(project: Path, engine, tmp_path: Path) -> None:
    recipe_file = project / "kernels" / "add_custom" / "kernel.toml"
    probe = (
        "ls /sys/class/net > {out}/net.txt; umask > {out}/umask.txt; "
        "touch {src}/x 2> {out}/ro.txt; date > {out}/date.txt; echo $SOURCE_DATE_EPOCH > {out}/sde.txt"
    )
    recipe_file.write_text(
        recipe_file.read_text()
        .replace(
            'build = ["make", "-C", "{src}/cpu", "OUT={out}", "OBJ={work}/obj"]', f'build = ["sh", "-c", "{probe}"]'
        )
        .replace('outputs = ["add_custom_cpu", "add_custom_tiling"]', 'outputs = ["*.txt"]')
    )
    st = Store(tmp_path / "store")
    out = builder.build(request_for(project, engine, sde=1700000000), engine, st).entry.outputs
    assert (out / "net.txt").read_text().split() == ["lo"]
    assert (out / "umask.txt").read_text().strip() == "0022"
    assert "Read-only file system" in (out / "ro.txt").read_text()
    assert " UTC " in (out / "date.txt").read_text()
    assert (out / "sde.txt").read_text().strip() == "1700000000"


ASCENV = [sys.executable, "-m", "ascenv"]


def _spawn(project: Path, *args: str):  # type: ignore[no-untyped-def]
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [*ASCENV, "build", "add_custom", "--format", "json", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(predicate, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


@pytest.mark.engine
def test_a_build_killed_with_sigkill_leaves_no_entry_and_no_container(project: Path, engine) -> None:
    import signal

    recipe_file = project / "kernels" / "add_custom" / "kernel.toml"
    recipe_file.write_text(
        recipe_file.read_text().replace(
            'build = ["make", "-C", "{src}/cpu", "OUT={out}", "OBJ={work}/obj"]', 'build = ["sh", "-c", "sleep 300"]'
        )
    )
    child = _spawn(project)

    def running() -> list:
        return engine.containers({builder.LABEL_OP: "add_custom", builder.PURPOSE_LABEL: "build"})

    mine = []
    try:
        assert _wait_for(lambda: bool(running()), 60), (
            child.stderr.read() if child.poll() is not None else "no container"
        )
        mine = running()
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()
    assert _wait_for(lambda: not any(n in engine.containers({builder.LABEL_OP: "add_custom"}) for n in mine), 30), mine
    st = Store(project / ".ascenv" / "store")
    assert st.entries() == []
    assert [p.name for p in (st.root / store.TMP).iterdir()] != []  # the staging of the killed build ...
    assert st.gc(5).swept_tmp  # ... which gc sweeps, its process being gone
    assert list((st.root / store.TMP).iterdir()) == []


@pytest.mark.engine
def test_two_concurrent_builds_of_one_key_make_one_entry(project: Path, engine) -> None:
    import json

    first, second = _spawn(project), _spawn(project)
    results = []
    for child in (first, second):
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        results.append(json.loads(out))
    assert results[0]["key"] == results[1]["key"]
    assert sorted(r["reused"] for r in results) == [False, True]
    st = Store(project / ".ascenv" / "store")
    assert [e.key for e in st.entries()] == [results[0]["key"]]
    assert st.verify(st.entries()[0]) == []


@pytest.fixture(autouse=True)
def _no_leftover_containers(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if request.node.get_closest_marker("engine") is None:
        return
    engine = request.getfixturevalue("engine")
    leftovers = engine.containers({"ascenv.purpose": "build"})
    assert leftovers == [], f"containers left behind: {leftovers}"


def test_outputs_reached_through_a_directory_symlink_are_never_moved(tmp_path: Path) -> None:
    # A build that leaves out/lib -> <a host directory> must not make ascenv move the host's files
    # into the store: only files really below out/ are outputs.
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    (host_dir / "libc.so").write_bytes(b"host file")
    out, dest = tmp_path / "out", tmp_path / "dest"
    (out / "real").mkdir(parents=True)
    (out / "real" / "libop.so").write_bytes(b"built")
    (out / "lib").symlink_to(host_dir)
    with pytest.raises(BuildFailed, match=r"no output matching 'lib/\*\.so'"):
        builder._collect_outputs(("lib/*.so",), out, dest)
    assert (host_dir / "libc.so").read_bytes() == b"host file" and not dest.exists()
    builder._collect_outputs(("*/*.so",), out, dest)
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()) == ["real/libop.so"]
    assert (host_dir / "libc.so").read_bytes() == b"host file"


@pytest.mark.parametrize("asked", ["nope_op", "add_custm", "kernels"])
def test_an_unknown_operator_names_the_projects_that_would_be_found_shipped_ones_too(tmp_path, asked):
    shipped = Path(__file__).resolve().parents[1] / "kernels"
    (tmp_path / "kernels" / "mine").mkdir(parents=True)
    (tmp_path / "kernels" / "mine" / builder.RECIPE_FILE).write_text("schema = 1\n")
    with pytest.raises(errors.UsageError) as raised:
        builder.find_kernel(tmp_path, asked, shipped)
    assert raised.value.hint == "operator projects found: add_custom, mine"


def test_with_no_project_anywhere_the_hint_says_where_it_looked(tmp_path):
    with pytest.raises(errors.UsageError) as raised:
        builder.find_kernel(tmp_path, "x", tmp_path / "shipped")
    hint = raised.value.hint
    assert hint.startswith("no kernel.toml under") and "found: none" not in hint
    assert str(tmp_path / "kernels") in hint and str(tmp_path / "shipped") in hint
