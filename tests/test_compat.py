"""ascenv.compat: the shipped compat/*.toml load, broken copies fail with the key path, and the
queries give the answers the published tables give (Ascend/pytorch README and COMPATIBILITY
tables, the ascend-deployer wheels on PyPI, hiascend.com and gitcode release notes)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from packaging.version import Version

from ascenv import compat, paths
from ascenv.compat import DriverFit, Status, TorchNpuFitGrade, TorchPin
from ascenv.errors import DataFileError
from ascenv.versions import AscendVersion, ProductLine
from tests.conftest import CORPUS, SHARED, load_capture

SHIPPED = paths.data_dir("compat")


@pytest.fixture(scope="module")
def matrix() -> compat.Matrix:
    return compat.load(SHIPPED)


def test_every_shipped_file_loads_with_rows(matrix: compat.Matrix) -> None:
    assert sorted(p.name for p in SHIPPED.glob("*.toml")) == sorted(compat.FILES)
    assert compat.load() == matrix  # the default directory is the shipped one
    assert len(matrix.cann_releases) >= 25 and len(matrix.hdk_rules) >= 40 and len(matrix.compilers) >= 5
    assert len(matrix.torch_npu_releases) >= 100 and len(matrix.windows) >= 5 and matrix.as_of == "2026-12-01"
    assert len(matrix.socs) >= 20 and matrix.pci_devices and matrix.pci_cards


def test_every_row_keeps_a_source_and_a_status(matrix: compat.Matrix) -> None:
    rows = [
        *matrix.cann_releases,
        *matrix.hdk_rules,
        *matrix.compilers,
        *matrix.ops_packages,
        *matrix.torch_npu_releases,
        *matrix.windows,
        *matrix.socs,
        *matrix.pci_devices,
        *matrix.pci_cards,
    ]
    for row in rows:
        assert row.provenance.source and all(s.strip() for s in row.provenance.source)
        assert isinstance(row.provenance.status, Status)
        if row.provenance.status is Status.CONFLICT:
            assert row.provenance.conflict


# --- PyPI -----------------------------------------------------------------------------------------


def test_every_torch_npu_version_on_pypi_has_a_row(matrix: compat.Matrix) -> None:
    listed = matrix.pypi.versions
    assert len(listed) >= 60 and "2.1.0.post3" in listed and "2.14.0" in listed
    missing = [text for text in listed if not any(r.on_pypi for r in matrix.torch_npu(text))]
    assert missing == []
    assert (
        re.fullmatch(r"\d{4}-\d{2}-\d{2}", matrix.pypi.retrieved)
        and "pip index versions torch-npu" in matrix.pypi.command
    )


def test_rows_on_pypi_are_exactly_the_listed_versions_with_the_listed_wheels(matrix: compat.Matrix) -> None:
    listed = {Version(text): matrix.pypi.python[text] for text in matrix.pypi.versions}
    on_pypi = {r.version for r in matrix.torch_npu_releases if r.on_pypi}
    assert on_pypi == set(listed)
    # Two independent readings of the index agree: the sources' wheel list and pip's answers.
    assert matrix.pypi.platform == "x86_64"
    for row in matrix.torch_npu_releases:
        if row.on_pypi:
            assert row.python_x86_64 == listed[row.version], row.text


def test_pypi_listing_without_a_row_is_refused(tmp_path: Path) -> None:
    folder = copy_shipped(tmp_path)
    edit(folder / "torch_npu.toml", '  "2.14.0",\n', '  "2.14.0",\n  "2.15.0",\n')
    with pytest.raises(
        DataFileError,
        match=r"compat/torch_npu.toml: pypi.versions\[\d+\]: 2.15.0 is on PyPI but has no \[\[releases\]\] row",
    ):
        compat.load(folder)


# --- broken copies ------------------------------------------------------------------------------


def copy_shipped(tmp_path: Path) -> Path:
    folder = tmp_path / "compat"
    shutil.copytree(SHIPPED, folder)
    return folder


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def release_index(path: Path, version: str) -> int:
    text = path.read_text(encoding="utf-8")
    before = text[: text.index(f'[[releases]]\nversion = "{version}"\n')]
    return before.count("[[releases]]")


@pytest.mark.parametrize(
    "file, old, new, message",
    [
        (
            "torch_npu.toml",
            'cann = "8.0.0"\nkind = "current-readme"',
            'cann = 8\nkind = "current-readme"',
            r"compat/torch_npu.toml: releases\[{i}\].cann: expected string, found integer 8",
        ),
        (
            "torch_npu.toml",
            'cann = "8.0.0"\nkind',
            'cann = "8.0.RCx"\nkind',
            r"compat/torch_npu.toml: releases\[{i}\].cann: not a cann version: '8.0.RCx'",
        ),
        (
            "torch_npu.toml",
            'cann = "8.0.0"\nkind',
            'can = "8.0.0"\nkind',
            r"compat/torch_npu.toml: releases\[{i}\].can: unknown key; perhaps you meant 'cann'\?",
        ),
        (
            "torch_npu.toml",
            'version = "2.1.0.post10"\ntorch = "2.1.0"\n',
            'version = "2.1.0.post10"\n',
            r"compat/torch_npu.toml: releases\[{i}\].torch: missing \(expected string\)",
        ),
        (
            "torch_npu.toml",
            'on_pypi = true\npython_x86_64 = ["3.8", "3.9", "3.10", "3.11"]',
            'on_pypi = "yes"\npython_x86_64 = ["3.8", "3.9", "3.10", "3.11"]',
            r"compat/torch_npu.toml: releases\[{i}\].on_pypi: expected boolean, found string 'yes'",
        ),
        (
            "torch_npu.toml",
            'torch_pin = "cpu-local-on-x86_64"\non_pypi = true\npython_x86_64 = ["3.8", "3.9", "3.10", "3.11"]',
            'torch_pin = "cpu"\non_pypi = true\npython_x86_64 = ["3.8", "3.9", "3.10", "3.11"]',
            r"compat/torch_npu.toml: releases\[{i}\].torch_pin: "
            r"expected one of none, cpu-local-on-x86_64, exact, unknown, found 'cpu'",
        ),
    ],
)
def test_broken_torch_npu_row_names_file_and_key_path(
    tmp_path: Path, file: str, old: str, new: str, message: str
) -> None:
    folder = copy_shipped(tmp_path)
    index = release_index(folder / file, "2.1.0.post10")
    text = (folder / file).read_text(encoding="utf-8")
    start = text.index('[[releases]]\nversion = "2.1.0.post10"\n')
    row_end = text.index("[[releases]]", start + 1)
    row = text[start:row_end]
    assert old in row, old
    (folder / file).write_text(text[:start] + row.replace(old, new) + text[row_end:], encoding="utf-8")
    with pytest.raises(DataFileError, match=message.format(i=index)):
        compat.load(folder)


def test_missing_source_is_refused(tmp_path: Path) -> None:
    folder = copy_shipped(tmp_path)
    text = (folder / "hardware.toml").read_text(encoding="utf-8")
    first = text.index("[[socs]]")
    source = text.index("source = [", first)
    end = text.index("]\n", source) + 2
    (folder / "hardware.toml").write_text(text[:source] + text[end:], encoding="utf-8")
    with pytest.raises(DataFileError, match=r"compat/hardware.toml: socs\[0\].source: missing \(expected list\)"):
        compat.load(folder)


def test_empty_source_and_conflict_without_the_other_value_are_refused(tmp_path: Path) -> None:
    folder = copy_shipped(tmp_path)
    edit(
        folder / "torch_npu.toml",
        'source = ["https://www.hiascend.com/document/detail/zh/Pytorch/720/releasenote/releasenote_0005.html"]',
        "source = []",
    )
    with pytest.raises(
        DataFileError, match=r"compat/torch_npu.toml: windows\[\d+\].source: expected at least one entry"
    ):
        compat.load(folder)
    folder = copy_shipped(tmp_path / "again")
    edit(
        folder / "cann.toml",
        'status = "conflict"\nconflict = "package_info.js pairs 8.0.RC2',
        'status = "conflict"\nremark = "package_info.js pairs 8.0.RC2',
    )
    with pytest.raises(DataFileError, match=r"compat/cann.toml: hdk\[\d+\].conflict: missing"):
        compat.load(folder)


@pytest.mark.parametrize(
    "file, old, new, message",
    [
        (
            "cann.toml",
            "schema = 1",
            "schema = 2",
            r"compat/cann.toml: schema: this ascenv reads schema 1, the file says 2",
        ),
        ("cann.toml", "schema = 1", "", r"compat/cann.toml: schema: missing \(expected integer\)"),
        (
            "cann.toml",
            'kind = "matched"',
            'kind = "matchd"',
            r"compat/cann.toml: hdk\[0\].kind: expected one of matched, compatible",
        ),
        (
            "cann.toml",
            'hdk = ["22.0.RC3.2"]',
            'hdk = ["22.0.RC3.2", 24]',
            r"compat/cann.toml: hdk\[0\].hdk\[1\]: expected a non-empty string, found 24",
        ),
        (
            "cann.toml",
            'chips = ["ascend310p"]',
            'chips = ["ascend310x"]',
            r"compat/cann.toml: releases\[\d+\].chips: unknown compute unit 'ascend310x'",
        ),
        (
            "cann.toml",
            'innerversion = "V100R001C13SPC005B246"',
            'innerversion = "C13"',
            r"compat/cann.toml: releases\[\d+\].innerversion: not a inner version: 'C13'",
        ),
        (
            "hardware.toml",
            'device = "0xd100"',
            'device = "d1oo"',
            r"compat/hardware.toml: pci_devices\[0\].device: expected a hexadecimal PCI id",
        ),
        (
            "hardware.toml",
            "ub_size = 262144",
            'ub_size = "256K"',
            r"compat/hardware.toml: socs\[\d+\].ub_size: expected integer, found string '256K'",
        ),
        (
            "torch_npu.toml",
            "[pypi.python]",
            "[pypi.pythons]",
            r"compat/torch_npu.toml: pypi.python: missing \(expected table\)",
        ),
        (
            "torch_npu.toml",
            "\n[[windows]]",
            "\n[[window]]",
            r"compat/torch_npu.toml: window: unknown key; perhaps you meant 'windows'\?",
        ),
        ("torch_npu.toml", 'retrieved = "', 'retrieved = "x', None),  # still a string: loads
        (
            "cann.toml",
            'as_of = "2026-12-01"',
            'as_of = "last week"',
            r"compat/cann.toml: as_of: expected a date like 2026-12-01, found 'last week'",
        ),
    ],
)
def test_broken_files_name_file_and_key_path(
    tmp_path: Path, file: str, old: str, new: str, message: str | None
) -> None:
    folder = copy_shipped(tmp_path)
    edit(folder / file, old, new)
    if message is None:
        compat.load(folder)
        return
    with pytest.raises(DataFileError, match=message):
        compat.load(folder)


def test_invalid_toml_missing_and_unexpected_files(tmp_path: Path) -> None:
    folder = copy_shipped(tmp_path)
    (folder / "hardware.toml").write_text("schema = 1\n[[socs]\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"compat/hardware.toml: not valid TOML"):
        compat.load(folder)
    (folder / "hardware.toml").unlink()
    with pytest.raises(DataFileError, match=r"compat/hardware.toml: missing"):
        compat.load(folder)
    shutil.copy(SHIPPED / "hardware.toml", folder / "hardware.toml")
    (folder / "mindspore.toml").write_text("schema = 1\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"compat/mindspore.toml: unknown data file"):
        compat.load(folder)


# --- CANN ↔ driver (ascend-deployer CANN_*.json required_soft; CANN release notes) ----------------


@pytest.mark.parametrize(
    "cann, driver, fit",
    [
        ("8.0.RC1", "24.1.rc1", DriverFit.MATCHED),
        ("8.0.RC3", "24.1.rc3", DriverFit.MATCHED),
        ("8.0.0", "24.1.0", DriverFit.MATCHED),
        ("8.1.RC1", "25.0.rc1.1", DriverFit.MATCHED),  # the deployer's 25.0.RC1 bundle files are 25.0.rc1.1
        ("8.0.RC2.beta1", "24.1.rc2.2", DriverFit.MATCHED),  # community label → commercial 8.0.RC2; patched driver
        ("8.0.0", "24.1.rc2", DriverFit.KNOWN_WORKING),  # package_info.js pairs 8.0.0 with 24.1.RC2
        ("8.0.0", "23.0.3", DriverFit.OLDER_THAN_MATCHED),  # no documented floor before 8.5: warn only
        ("8.2.RC1", "24.1.rc3", DriverFit.COMPATIBLE),  # MindIE 2.1.RC1 list
        ("8.2.RC1", "24.1.rc1", DriverFit.BELOW_MINIMUM),
        ("8.5.0", "25.3.rc1", DriverFit.COMPATIBLE),
        ("8.5.0", "24.1.0", DriverFit.BELOW_MINIMUM),  # 8.5.x needs >= 25.0.X
        ("9.0.0", "25.0.rc1.1", DriverFit.COMPATIBLE),
        ("9.1.0", "25.0.rc1.1", DriverFit.INCOMPATIBLE),  # 9.1.X: 25.0.X explicitly N
        ("9.1.0", "25.2.0", DriverFit.COMPATIBLE),
        ("9.1.1", "26.1.1", DriverFit.MATCHED),
        ("8.3.RC2", "25.3.rc1", DriverFit.UNKNOWN),
    ],
)
def test_driver_fit(matrix: compat.Matrix, cann: str, driver: str, fit: DriverFit) -> None:
    verdict = matrix.driver_fit(cann, driver)
    assert verdict.fit is fit
    assert (verdict.evidence == ()) is (fit is DriverFit.UNKNOWN)


def test_driver_fit_keeps_conflict_and_per_chip_rows(matrix: compat.Matrix) -> None:
    soft = matrix.driver_fit("8.0.RC3", "24.1.rc2")
    assert soft.fit is DriverFit.KNOWN_WORKING and soft.evidence[0].provenance.status is Status.CONFLICT
    # 7.0.0: 910B got HDK 23.0.3, 310P HDK 23.0.2.1 whose driver file says 23.0.1.
    assert matrix.driver_fit("7.0.0", "23.0.1", applies_to=["ascend310p"]).fit is DriverFit.MATCHED
    assert matrix.driver_fit("7.0.0", "23.0.3", applies_to=["ascend910b"]).fit is DriverFit.MATCHED
    assert matrix.driver_fit("7.0.0", "23.0.3").fit is DriverFit.UNKNOWN


def test_ascend950_hdk_line_is_never_compared_with_a2_a3_numbers(matrix: compat.Matrix) -> None:
    # Atlas 950 SuperPoD runs 25.1.RC1 with CANN 9.1.0, below the A2/A3 floor 25.2.X.
    line = matrix.driver_fit("9.1.0", "25.1.RC1", applies_to=["Atlas 950 SuperPoD"], hdk_line="ascend950")
    assert line.fit is DriverFit.MATCHED
    assert matrix.driver_fit("9.1.0", "25.1.RC1").fit is DriverFit.BELOW_MINIMUM


def test_cann_for_driver(matrix: compat.Matrix) -> None:
    allowed = {v.cann.raw: v.fit for v in matrix.cann_for_driver("25.2.0")}
    assert allowed["8.2.RC1"] is DriverFit.MATCHED
    assert allowed["9.1.0"] is DriverFit.COMPATIBLE and allowed["8.5.0"] is DriverFit.COMPATIBLE
    assert "8.0.0" not in allowed
    newest_first = [v.cann for v in matrix.cann_for_driver("25.2.0")]
    assert newest_first == sorted(newest_first, reverse=True)


def test_cann_releases_chips_packages_and_compiler(matrix: compat.Matrix) -> None:
    assert matrix.cann_release("8.5.0").package_for("ascend910_93") == ("Ascend-cann-A3-ops", Status.DOCUMENTED)
    assert matrix.cann_release("8.3.RC1").package_for("ascend910_93") == ("Atlas-A3-cann-kernels", Status.DOCUMENTED)
    # A3 before 8.3 is INFERRED from torch_npu's SoC table
    # (github:Ascend/pytorch:torch_npu/csrc/core/npu/NpuVariables.cpp, tags v6.0.rc3-*).
    assert matrix.cann_release("8.0.0").package_for("ascend910_93") == ("Atlas-A3-cann-kernels", Status.INFERRED)
    assert matrix.cann_release("8.1.RC1").package_for("ascend910b") == ("Ascend-cann-kernels-910b", Status.DOCUMENTED)
    assert matrix.cann_release("8.0.RC3.beta1").version.raw == "8.0.RC3"
    assert matrix.cann_release("7.5.0") is None
    assert matrix.compiler_version("8.0.0").version.raw == "7.6.0.1.220"
    assert matrix.compiler_version("8.0.RC3").provenance.status is Status.INFERRED


@pytest.mark.skipif(not (SHARED / "opproject-refdata").is_dir(), reason="../shared/opproject-refdata is not available")
def test_compiler_version_of_8_1_rc1_is_the_one_in_its_compiler_version_info(matrix: compat.Matrix) -> None:
    payload = (SHARED / "opproject-refdata" / "cann-8.1.RC1_compiler_version.info").read_text().split("\n", 1)[1]
    assert matrix.compiler_version("8.1.RC1").version.raw == re.search(r"^Version=(.+)$", payload, re.M).group(1)


@pytest.mark.parametrize(
    "capture", sorted((CORPUS / "version_files").glob("ascend_toolkit_install.info_*.txt")), ids=lambda p: p.name
)
def test_every_recorded_toolkit_is_a_known_release_of_its_train(matrix: compat.Matrix, capture: Path) -> None:
    text = load_capture(capture)
    version = re.search(r"^version=(.+)$", text, re.M).group(1)
    inner = AscendVersion.parse(re.search(r"^innerversion=(.+)$", text, re.M).group(1), line=ProductLine.INNER)
    release = matrix.cann_release(version)
    assert release is not None, version
    assert release.innerversion is not None and release.innerversion.train == inner.train


# --- torch_npu (github:Ascend/pytorch README/COMPATIBILITY tables; PyPI torch-npu wheels) ---------


def test_fix_suggester_for_cann_8_0_0_and_torch_2_1_0(matrix: compat.Matrix) -> None:
    fits = matrix.torch_npu_for("8.0.0", "2.1.0")
    best = fits[0]
    assert (best.release.text, best.grade) == ("2.1.0.post10", TorchNpuFitGrade.VALIDATED)
    # x86_64 wheels pin torch==2.1.0+cpu, which PyPI's plain 2.1.0 does not satisfy.
    assert best.pip_command("x86_64") == "pip install torch==2.1.0+cpu torch-npu==2.1.0.post10"
    assert best.pip_command("aarch64") == "pip install torch==2.1.0 torch-npu==2.1.0.post10"
    assert {f.grade for f in fits[1:]} <= {TorchNpuFitGrade.WINDOW, TorchNpuFitGrade.UNVERIFIED}
    assert all(f.release.torch == best.release.torch for f in fits)


def test_fix_suggester_filters_by_python_wheel(matrix: compat.Matrix) -> None:
    # 2.1.0.post3/post6 have cp38–cp310 only; post8 gained cp311 (the torch-npu wheel files on the package index).
    texts = [f.release.text for f in matrix.torch_npu_for("8.0.RC2", "2.1.0", python="3.11")]
    assert "2.1.0.post6" not in texts
    assert [f.release.text for f in matrix.torch_npu_for("8.0.RC2", "2.1.0", python="3.10")][0] == "2.1.0.post6"


def test_torch_pin_from_2_12_is_exact(matrix: compat.Matrix) -> None:
    (row,) = matrix.torch_npu("2.12.0")
    assert row.torch_pin is TorchPin.EXACT and row.torch_requirement("x86_64") == "torch==2.12.0"
    assert row.cann.raw == "9.1.0"


@pytest.mark.parametrize(
    "torch_npu, cann, grade",
    [
        ("2.1.0.post10", "8.0.0", TorchNpuFitGrade.VALIDATED),
        ("2.1.0.post10", "8.3.RC1", TorchNpuFitGrade.WINDOW),  # PTA 6.0.0 window: 8.0.RC2…8.3.RC1
        ("2.6.0.post5", "9.1.0", TorchNpuFitGrade.WINDOW),  # PTA 7.3.0 window: 8.5.X/9.0.X/9.1.X
        ("2.7.1", "9.0.0", TorchNpuFitGrade.OUTSIDE),  # fails: undefined symbol MsprofSysCycleTime
        ("2.7.1.post6", "9.0.0", TorchNpuFitGrade.UNVERIFIED),  # PyPI-only, CANN INFERRED from its branch
        ("2.1.0.post11", "8.2.RC1", TorchNpuFitGrade.UNVERIFIED),  # CONFLICT deployer vs README
        ("2.1.0.post11", "8.1.RC1", TorchNpuFitGrade.VALIDATED),
        ("2.9.1", "9.0.0", TorchNpuFitGrade.UNKNOWN),
    ],
)
def test_torch_npu_cann_fit(matrix: compat.Matrix, torch_npu: str, cann: str, grade: TorchNpuFitGrade) -> None:
    assert matrix.torch_npu_cann_fit(torch_npu, cann).grade is grade


@pytest.mark.parametrize(
    "torch_npu, cann, first",
    [
        # nothing documented for these pairs: the published CANN of the torch_npu, nearest first
        ("2.9.0", "9.2.0", "9.1.X/9.0.X/8.5.1/8.5.X"),  # newer than every table column: the newest first
        ("2.7.1.post4", "8.4.0", "8.5.0/8.3.RC1/"),  # between two published releases: one each side
        ("2.9.0", "7.0.0", "8.0.0/8.1.RC1/8.2.RC1"),  # older than all of them: the oldest first
    ],
)
def test_nothing_documented_names_the_nearest_published_pairs_first(
    matrix: compat.Matrix, torch_npu: str, cann: str, first: str
) -> None:
    fit = matrix.torch_npu_cann_fit(torch_npu, cann)
    assert fit.grade is TorchNpuFitGrade.UNKNOWN
    assert fit.nearest[1].startswith("CANN " + first) and fit.nearest[1].endswith(" (published tables)")


def test_conflict_rows_keep_both_values(matrix: compat.Matrix) -> None:
    rows = {r.kind: r for r in matrix.torch_npu("2.1.0.post11")}
    deployer = rows["ascend-deployer-only"]
    assert deployer.provenance.status is Status.CONFLICT
    assert (deployer.cann.raw, deployer.conflicting_cann.raw) == ("8.2.RC1", "8.1.RC1")
    assert rows["removed-or-superseded-in-readme"].cann.raw == "8.1.RC1"


def test_torch_npu_lookup_normalises_versions(matrix: compat.Matrix) -> None:
    assert [r.text for r in matrix.torch_npu("2.1.0.rc1")] == ["2.1.0.rc1"]
    assert matrix.torch_npu("2.1.0rc1") == matrix.torch_npu("2.1.0.rc1")
    assert [r.text for r in matrix.torch_npu("2.1.0.post10+git4ecd50b")] == ["2.1.0.post10"]
    assert matrix.torch_npu("2.5.1.dev20250218") == ()
    assert {r.text for r in matrix.torch_npu_line("2.5.1+cpu")} >= {"2.5.1", "2.5.1.post1", "2.5.1rc1"}
    with pytest.raises(LookupError):
        matrix.torch_npu_cann_fit("2.5.1.dev20250218", "8.1.RC1")


def test_python_for_uses_wheel_tags_per_arch(matrix: compat.Matrix) -> None:
    (row,) = matrix.torch_npu("2.10.0.post6")
    assert row.python_for("x86_64") == ("3.10", "3.11") and row.python_for("aarch64") == ("3.10", "3.11", "3.12")
    (doc_only,) = matrix.torch_npu("2.0.1")
    assert not doc_only.on_pypi and doc_only.python_for("x86_64") == ("3.8", "3.9", "3.10")


# --- hardware ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, board, soc, unit",
    [
        ("910B4", None, "Ascend910B4", "ascend910b"),
        ("910B4-1", None, "Ascend910B4-1", "ascend910b"),
        ("910B", None, "Ascend910B", "ascend910"),  # first-generation 910 bin, not a 910B1–B4
        ("910ProB", None, "Ascend910ProB", "ascend910"),
        ("310P3", None, "Ascend310P3", "ascend310p"),
        ("310B4", None, "Ascend310B4", "ascend310b"),
        ("Ascend910", ("Ascend910", "9392"), "Ascend910_9392", "ascend910_93"),
    ],
)
def test_soc_for_npu_smi_name(matrix: compat.Matrix, name: str, board: tuple | None, soc: str, unit: str) -> None:
    chip, npu = board or (None, None)
    row = matrix.soc_for_npu_smi(name, board_chip_name=chip, board_npu_name=npu)
    assert (row.soc_version, row.compute_unit) == (soc, unit)
    assert compat.soc_version_for_npu_smi(name, board_chip_name=chip, board_npu_name=npu) == soc


@pytest.mark.parametrize("name", ["Ascend950PR", "Ascend950DT", "ascend950pr"])
def test_the_950_names_npu_smi_prints_find_their_row_but_no_atc_target(matrix: compat.Matrix, name: str) -> None:
    # npu-smi 25.7.rc1 prints "Ascend950PR" (SwanLab#1719); ATC targets carry a suffix (Ascend950PR_9599)
    row = matrix.soc_for_npu_smi(name)
    assert row is not None and row.compute_unit == "ascend950"
    assert compat.soc_version_for_npu_smi(name) is None


def test_a3_needs_board_info_and_unknown_names_still_get_the_atc_rule(matrix: compat.Matrix) -> None:
    assert matrix.soc_for_npu_smi("Ascend910") is None
    assert compat.soc_version_for_npu_smi("Ascend910") is None
    assert compat.soc_version_for_npu_smi("310Pvir01") == "Ascend310Pvir01"
    assert matrix.soc_for_npu_smi("310Pvir01") is None


def test_ub_size_where_sourced(matrix: compat.Matrix) -> None:
    assert matrix.soc("Ascend910B4").ub_size == 192 * 1024
    assert matrix.soc("ascend910_9391").ub_size == 192 * 1024
    assert matrix.soc("Ascend310P3").ub_size == 256 * 1024
    assert matrix.soc("Ascend910B3").ub_size is None


def test_card_for_pci(matrix: compat.Matrix) -> None:
    a2 = matrix.card_for_pci("0xD802", "0x19e5", "0x3002")  # npu-smi spells ids in upper case
    assert a2.card == "Atlas 800I A2" and a2.device.compute_unit == "ascend910b" and a2.card_row.family == "A2"
    assert matrix.card_for_pci("0xd100", "0x0200", "0x0100", arch="aarch64").card == "A300-3000"
    assert matrix.card_for_pci("0xd100", "0x0200", "0x0100", arch="x86_64").card == "A300-3010"
    a3 = matrix.card_for_pci(0xD803)
    assert a3.card is None and a3.device.compute_unit == "ascend910_93"
    unknown = matrix.card_for_pci("0x1234", "0x19e5", "0x3002")
    assert (unknown.card, unknown.device) == (None, None)
