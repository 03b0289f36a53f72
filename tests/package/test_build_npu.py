"""`ascenv build --target npu` normalizes its .run outputs, so `--verify` compares normalized
packages. Unit level: a fake engine stands in for the CANN container (no CANN here) and
"builds" a makeself package with a new mtime and path each time, as a real build would."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from ascenv import builder, errors, store
from ascenv.containers.engine import RunResult
from ascenv.package import makeself
from ascenv.package.normalize import TARGET_DIR
from tests.package.pkgbuild import make_package, needs_makeself

pytestmark = needs_makeself
KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "add_custom"


class PackagingEngine:
    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.count = itertools.count()

    def run(self, image: str, argv: list, *, mounts: list, **_: object) -> RunResult:
        n = next(self.count)
        made = make_package(self.scratch / f"run{n}" / ("deep/" * n), self.scratch / "canary", mtime=1_800_000_000 + n)
        out = next(m.source for m in mounts if m.target == builder.OUT)
        shutil.copy(made, Path(out) / made.name)
        return RunResult(exit_code=0, timed_out=False, logs="built\n", duration=0.1, container=f"fake-{n}")


def request(tmp_path: Path) -> builder.Request:
    kernel = tmp_path / "add_custom"
    shutil.copytree(KERNEL, kernel)
    image = builder.PinnedImage("cann-fake", "sha256:" + "1" * 64, "sha256:" + "2" * 64)
    return builder.Request(
        kernel, builder.load_recipe(kernel), "npu", image, "0.1.0", 1_700_000_000, "recipe", host=dict, timeout=60
    )


def test_npu_outputs_are_normalized_and_verify_passes(tmp_path: Path) -> None:
    st = store.Store(tmp_path / "store")
    outcome = builder.build(request(tmp_path), PackagingEngine(tmp_path / "scratch"), st, verify=True)  # type: ignore[arg-type]
    assert outcome.verified
    (package,) = outcome.entry.outputs.glob("*.run")
    header = makeself.read_header(package)
    assert header.target_dir == TARGET_DIR and header.date == "Tue Nov 14 22:13:20 UTC 2023"
    assert st.verify(outcome.entry) == []  # the manifest records the normalized bytes


def test_without_normalizing_verify_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builder, "normalize_packages", lambda outputs, epoch: [])
    st = store.Store(tmp_path / "store")
    with pytest.raises(errors.NotReproducible, match="custom_opp_ubuntu_aarch64.run"):
        builder.build(request(tmp_path), PackagingEngine(tmp_path / "scratch"), st, verify=True)  # type: ignore[arg-type]
