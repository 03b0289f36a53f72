"""Running programs of a stored build in the container it was built in, shared by ``bench run``
and ``test``: the build chosen by key prefix (or the newest of op/target) and verified, the
very image it was made in, and one container with the isolation of ``ascenv build`` (labelled,
no network, sources and outputs read-only, a scratch ``{work}``, the caller's uid, always
removed) that runs one sh script."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Callable, Optional

from ascenv import builder, store
from ascenv.containers.engine import Engine, Mount, RunResult
from ascenv.errors import UsageError


def chosen_build(st: store.Store, op: str, target: str, build: Optional[str], store_option: str) -> store.Entry:
    """The build ``build`` names (a key prefix of ``op``'s ``target``), else the newest one;
    a damaged build is refused."""
    build_hint = f"build it first: ascenv build {op} --target {target}{store_option}"
    if build:
        entry = st.find(build)
        if entry.op != op or entry.manifest is None or entry.manifest.target != target:
            what = f"{entry.op} ({entry.manifest.target})" if entry.manifest else f"{entry.op} (damaged)"
            raise UsageError(f"build {entry.key[:12]} is of {what}, not {op} ({target})", hint=build_hint)
    else:
        builds = [e for e in st.entries() if e.op == op and e.manifest is not None and e.manifest.target == target]
        if not builds:
            raise UsageError(f"no stored {target} build of {op} in {st.root}", hint=build_hint)
        entry = builds[0]
    problems = st.verify(entry)
    if problems:
        raise UsageError(
            f"the stored build {entry.key[:12]} of {op} is damaged: {problems[0]}", hint=f"re{build_hint[1:]}"
        )
    return entry


def refuse_other_sources(kernel_dir: Path, entry: store.Entry, reader: str, what: str, build: str, other: str) -> None:
    """A program that reads ``{src}`` reads the project's sources as they are now, beside the
    stored build's outputs: where they are not the sources that build was made from, what it
    measures (``what``) would belong to neither version. Exit 2 then."""
    assert entry.manifest is not None
    now = store.tree_digest(store.hash_tree(kernel_dir))
    built = entry.manifest.source_digest
    if now != built:
        raise UsageError(
            f"{reader} reads {{src}}, and the sources in {kernel_dir} are not those build {entry.key[:12]} was made "
            f"from (source digest {now[:12]}, the build's {built[:12]}): {what} would mix the two",
            hint=f"build these sources first: {build}, or {other}",
        )


def build_image(entry: store.Entry, engine: Engine, resolve: Callable[[Engine, str], builder.PinnedImage]) -> str:
    """The very image the build ran in: present, or obtained as pinned and then the same ID."""
    assert entry.manifest is not None
    toolchain = entry.manifest.toolchain
    if engine.image(toolchain.image_id) is not None:
        return toolchain.image_id
    pinned = resolve(engine, toolchain.image)
    if pinned.image_id != toolchain.image_id:
        raise UsageError(
            f"build {entry.key[:12]} was made in {toolchain.image} {toolchain.image_id[:19]}, which the engine no "
            f"longer holds; the pin now gives {pinned.image_id[:19]}",
            hint=f"build again with the current pin: ascenv build {entry.op} --target {entry.manifest.target}",
        )
    return pinned.image_id


@contextlib.contextmanager
def run_script(
    kernel_dir: Path,
    recipe: builder.KernelRecipe,
    st: store.Store,
    entry: store.Entry,
    script: str,
    *,
    purpose: str,
    connect: Callable[[], Engine],
    resolve: Callable[[Engine, str], builder.PinnedImage],
    timeout: float,
    prepare: Callable[[Path], None] = lambda _: None,
    on_log: Callable[[str], None] = lambda _: None,
) -> Iterator[tuple[Path, RunResult]]:
    """``sh -c script`` in the build's container; yields the host directory mounted at {work}
    (``prepare`` fills it first) and the run's result, both gone when the block ends."""
    assert entry.manifest is not None
    m = entry.manifest
    engine = connect()
    image_id = build_image(entry, engine, resolve)
    pinned = builder.PinnedImage(m.toolchain.image, m.toolchain.image_ref, image_id)
    like_build = builder.Request(
        kernel_dir, recipe, m.target, pinned, m.ascenv_version, m.source_date_epoch, m.source_date_epoch_from
    )
    with st.staging(f"{purpose}-{entry.op}") as stage:
        for sub in ("work/home", "work/tmp", "meta"):
            (stage / sub).mkdir(parents=True)
        prepare(stage / "work")
        result = engine.run(
            image_id,
            ["sh", "-c", script],
            meta=stage / "meta",
            mounts=[
                Mount(str(kernel_dir), builder.SRC, read_only=True),
                Mount(str(entry.outputs), builder.OUT, read_only=True),
                Mount(str(stage / "work"), builder.WORK, read_only=False),
            ],
            env=builder.container_env(like_build),
            labels={builder.LABEL_OP: entry.op, builder.LABEL_KEY: entry.key, builder.PURPOSE_LABEL: purpose},
            workdir=builder.SRC,
            timeout=timeout,
            on_log=on_log,
        )
        yield stage / "work", result


def progress(prefix: str, on_event: Callable[[str], None]) -> Callable[[str], None]:
    """Container log chunks -> one event per line starting with ``prefix`` (the script's progress)."""
    pending = [""]

    def feed(chunk: str) -> None:
        *lines, pending[0] = (pending[0] + chunk).split("\n")
        for line in lines:
            if line.startswith(prefix):
                on_event(line[len(prefix) :])

    return feed
