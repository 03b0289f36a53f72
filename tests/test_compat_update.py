"""bin/compat_update.py: compat/*.toml is what the saved sources in compat/sources/ regenerate, the
parsers read the published formats, and a contradiction between sources becomes CONFLICT."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from ascenv import compat, paths
from ascenv.compat import DriverFit, Status
from tests.checks.helpers import a2_host, findings_of, with_install
from tests.cli_helpers import bin_script

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = paths.data_dir("compat")


tool = bin_script("compat_update")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "compat"
    shutil.copytree(SHIPPED, folder)
    return folder


def test_shipped_toml_is_what_the_saved_sources_regenerate() -> None:
    update = tool.regenerate(SHIPPED)
    assert update.report == [] and update.conflicts == []
    assert update.cann_toml == (SHIPPED / "cann.toml").read_text(encoding="utf-8")
    assert update.torch_npu_toml == (SHIPPED / "torch_npu.toml").read_text(encoding="utf-8")
    assert update.stacks_toml == (SHIPPED / "stacks.toml").read_text(encoding="utf-8")
    assert tool.main(["--check"]) == 0


def test_every_saved_source_names_its_url_or_fetch_and_its_day() -> None:
    saved = tool.load_sources(SHIPPED / "sources")
    assert set(saved) >= {tool.COMPATIBILITY, tool.WHEEL_METADATA, tool.DEPLOYER, "cann-9.2.0-release-notes.txt"}
    for copy in saved.values():
        assert copy.source.startswith(
            (
                "https://",
                "github:Ascend/pytorch@",
                "github:vllm-project/vllm-ascend@",
                "github:Ascend/cann-container-image@",
                "github:sgl-project/sglang@",
                "github:hicann/asc-tools@",
                "github:tile-ai/tilelang-ascend@",
                "METADATA and WHEEL of torch-npu wheels",
                "WHEEL tags of triton-ascend wheels",
                "ascend-deployer 26.0.0 wheel",
            )
        )
        assert len(copy.retrieved) == 10 and copy.retrieved.startswith("2026-")


def test_compatibility_table_parser_reads_both_tables() -> None:
    rows = tool.parse_compatibility_tables(tool.read_saved(SHIPPED / "sources" / tool.COMPATIBILITY).text)
    assert len(rows) == 62  # 26 active + 36 EOL
    assert rows[0] == tool.TableRow("2.12.0", "v2.12.0-26.1.0", "2.12.0", "9.1.0")
    assert tool.TableRow("1.11.0.rc2", "v1.11.0-3.0.0", "1.11.0", "6.0.1") in rows  # "(beta)" dropped
    assert rows[-1].cann == "5.0.2"


def test_release_note_parser_reads_mapping_and_compatibility() -> None:
    notes = tool.parse_release_notes(tool.read_saved(SHIPPED / "sources" / "cann-9.2.0-release-notes.txt").text)
    assert notes.mapping == (("9.2.0", "26.2.RC1"),)
    assert ("9.2.0", "25.2.X", False) in notes.compatibility and ("9.2.0", "25.3.X", True) in notes.compatibility
    assert ("9.1.X", "25.0.X", False) in notes.compatibility and len(notes.compatibility) == 4 * 7


@pytest.mark.parametrize(
    ("requirement", "pin"),
    [
        ("torch (==2.1.0+cpu)", ("cpu-local-on-x86_64", "2.1.0")),
        ("torch ==2.9.1+cpu", ("cpu-local-on-x86_64", "2.9.1")),
        ("torch ==2.12.0", ("exact", "2.12.0")),
        ("torch==2.14.0.*", ("exact", "2.14.0")),
        ("torch", ("unknown", "")),
    ],
)
def test_torch_pin_of_a_requires_dist_line(requirement: str, pin: tuple[str, str]) -> None:
    assert tool.torch_pin(requirement) == pin


def _rewrite_source(data: Path, name: str, old: str, new: str) -> None:
    path = data / "sources" / name
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_changed_wheel_pin_is_reported_and_written(data: Path) -> None:
    _rewrite_source(data, tool.WHEEL_METADATA, '"torch ==2.9.1+cpu"', '"torch ==2.9.1"')
    update = tool.regenerate(data)
    assert update.report == ["change   torch_npu 2.9.1: {'torch_pin': 'cpu-local-on-x86_64'} -> {'torch_pin': 'exact'}"]
    (data / "torch_npu.toml").write_text(update.torch_npu_toml, encoding="utf-8")
    (row,) = compat.load(data).torch_npu("2.9.1")
    assert row.torch_pin.value == "exact" and any("torch-npu-wheel-metadata.json" in s for s in row.provenance.source)


def test_a_new_table_row_is_added(data: Path) -> None:
    _rewrite_source(
        data,
        tool.COMPATIBILITY,
        "|                2.12.0                 | v2.12.0-26.1.0 |",
        "| 2.15.0 | v2.15.0-26.2.0 | 2.15.0 | CANN 9.2.0 |\n|                2.12.0                 | v2.12.0-26.1.0 |",
    )
    update = tool.regenerate(data)
    assert update.report == [
        "add      torch_npu 2.15.0: new row {'cann': '9.2.0', 'torch': '2.15.0', 'branch': 'v2.15.0-26.2.0'}"
    ]
    (data / "torch_npu.toml").write_text(update.torch_npu_toml, encoding="utf-8")
    matrix = compat.load(data)
    assert matrix.torch_npu_cann_fit("2.15.0", "9.2.0").grade.value == "validated"


def test_a_torch_npu_contradiction_keeps_both_sources_as_conflict(data: Path) -> None:
    # the table now says 2.8.0 was validated with CANN 8.3.RC2; the shipped row says 8.3.RC1
    _rewrite_source(
        data,
        tool.COMPATIBILITY,
        "v2.8.0-7.2.0  |      2.8.0      | CANN 8.3.RC1",
        "v2.8.0-7.2.0  |      2.8.0      | CANN 8.3.RC2",
    )
    update = tool.regenerate(data)
    assert len(update.report) == 1 and update.report[0].startswith("conflict torch_npu 2.8.0: CANN 8.3.RC2 (")
    (data / "torch_npu.toml").write_text(update.torch_npu_toml, encoding="utf-8")
    (row,) = compat.load(data).torch_npu("2.8.0")
    assert (
        row.provenance.status is Status.CONFLICT
        and str(row.cann) == "8.3.RC1"
        and str(row.conflicting_cann) == "8.3.RC2"
    )
    assert row.provenance.conflict and "contradicts CANN 8.3.RC1" in row.provenance.conflict
    sources = row.provenance.source
    assert any("saved: compat/sources/ascend-pytorch-COMPATIBILITY.en.md" in s for s in sources)
    assert any("9e73e708" in s for s in sources)  # the row's own source is kept


def test_an_hdk_contradiction_between_release_notes_is_conflict(data: Path) -> None:
    # a later note that says N where the 9.2.0 note says Y
    (data / "sources" / "cann-9.3.0-release-notes.txt").write_text(
        "# source: https://example.invalid/9.3.0/release-notes.md\n# retrieved: 2026-12-02\n"
        "CANN Software Version Mapping Table\nCANN Driver Version (Ascend HDK)\n9.3.0 26.3.RC1\n\n"
        "CANN and Ascend HDK Version Compatibility\nCANN Driver Version (Ascend HDK)\n25.3.X 26.3.RC1\n"
        "9.2.0 N Y\n",
        encoding="utf-8",
    )
    update = tool.regenerate(data)
    assert update.conflicts == [
        "CANN 9.2.0 with HDK 25.3.X: Y in "
        + "https://www.hiascend.com/document/detail/en/CANNCommunityEdition/920/softwareinst/releasenote/9.2.0/"
        "release-notes.md (saved: compat/sources/cann-9.2.0-release-notes.txt, retrieved 2026-12-01); "
        "N in https://example.invalid/9.3.0/release-notes.md (saved: compat/sources/cann-9.3.0-release-notes.txt, "
        "retrieved 2026-12-02)"
    ]
    (data / "cann.toml").write_text(update.cann_toml, encoding="utf-8")
    matrix = compat.load(data)
    verdict = matrix.driver_fit("9.2.0", "25.3.rc1")
    (rule,) = verdict.evidence
    assert rule.provenance.status is Status.CONFLICT and len(rule.provenance.source) == 2
    assert verdict.fit is DriverFit.INCOMPATIBLE  # the graded check softens it (see test below)
    assert matrix.driver_fit("9.2.0", "26.3.rc1").fit is DriverFit.COMPATIBLE
    snap = with_install(a2_host(**{"driver__version": "25.3.rc1", "npu__driver_version": "25.3.rc1"}), version="9.2.0")
    (finding,) = findings_of(snap, "ASC-CANN-DRIVER", matrix)
    assert finding.severity.value == "warn" and "the source marks this conflict" in finding.found


def test_deployer_pairs_agree_with_rows_or_recorded_conflicts() -> None:
    pairs = tool.parse_deployer(json.loads((SHIPPED / "sources" / tool.DEPLOYER).read_text(encoding="utf-8")))
    assert ("2.6.0.post6", "9.0.0") in pairs and ("2.3.1.post5", "8.2.RC1") in pairs and len(pairs) == 25


# --- Ascend/pytorch release notes -------------------------------------------------------------------

NOTES = "ascend-pytorch-{}-release_notes.{}.md"


def _notes(branch: str, lang: str):
    return tool.parse_pytorch_release_notes(tool.read_saved(SHIPPED / "sources" / NOTES.format(branch, lang)).text)


def test_the_br_separated_list_of_a_branch_release_note_zh_and_en() -> None:
    zh, rows_zh = _notes("v2.7.1-26.0.0", "zh")
    en, rows_en = _notes("v2.7.1-26.0.0", "en")
    assert zh == en  # the two languages of one note say the same
    assert [p.cann for p in zh if p.pta == "26.0.0"] == ["9.0.0", "8.5.0", "8.3.RC1", "8.2.RC1", "8.1.RC1"]
    assert [p.cann for p in zh if p.pta == "7.3.0"] == ["8.5.0", "8.3.RC1", "8.2.RC1", "8.1.RC1", "8.0.0"]
    assert all(p.compatible for p in zh) and len(zh) == 5 + 5 + 6 + 6
    # the mapping table: "商用版：9.0.0<br>社区版：9.0.0" / "Commercial Edition: 9.0.0<br>…" is one CANN
    assert tool.TableRow("2.7.1.post4", "v2.7.1-26.0.0", "2.7.1", "9.0.0") in rows_zh
    assert rows_zh == rows_en and len(rows_zh) == 4


def test_the_y_matrix_of_the_26_1_0_release_note_zh_and_en() -> None:
    for lang in ("zh", "en"):
        pairings, rows = _notes("v2.7.1-26.1.0", lang)
        assert {(p.pta, p.cann) for p in pairings} == {
            (pta, cann) for pta in ("7.3.X", "26.0.X", "26.1.X") for cann in ("8.5.X", "9.0.X", "9.1.X")
        }
        assert all(p.compatible for p in pairings)
        assert tool.TableRow("2.10.0.post4", "v2.10.0-26.1.0", "2.10.0", "9.1.0") in rows and len(rows) == 5


def test_the_7_3_0_release_note_lists_7_0_0_to_7_3_0() -> None:
    pairings, _ = _notes("v2.7.1-7.3.0", "zh")
    assert {p.pta for p in pairings} == {"7.3.0", "7.2.0", "7.1.0", "7.0.0"}
    assert tool.Pairing("7.0.0", "8.0.RC2", True) in pairings


def test_an_empty_cell_documents_nothing_and_an_n_is_incompatible() -> None:
    text = (
        "## Version Compatibility\n<table><thead><tr><th>TorchNPU</th><th>CANN Version</th></tr>"
        "<tr><th>9.1.X</th><th>9.2.x</th><th>9.3.X</th></tr></thead><tbody>"
        "<tr><td>26.2.X</td><td>N</td><td>Y</td><td></td></tr></tbody></table>\n"
    )
    pairings, _ = tool.parse_pytorch_release_notes(text)
    assert pairings == [tool.Pairing("26.2.X", "9.1.X", False), tool.Pairing("26.2.X", "9.2.X", True)]


def test_release_note_pairings_become_documented_windows_with_their_sources() -> None:
    matrix = compat.load(SHIPPED)
    fit = matrix.torch_npu_cann_fit("2.7.1.post4", "8.3.RC1")  # PTA 26.0.0's own list
    assert fit.grade is compat.TorchNpuFitGrade.WINDOW
    assert fit.source.startswith("github:Ascend/pytorch@89d88d4560c996734712e9b5585c7745f21875d2:docs/")
    assert "saved: compat/sources/ascend-pytorch-v2.7.1-26.0.0-release_notes" in fit.source
    assert matrix.torch_npu_cann_fit("2.9.0", "8.2.RC1").grade is compat.TorchNpuFitGrade.WINDOW  # 7.3.0's list
    assert matrix.torch_npu_cann_fit("2.7.1", "9.0.0").grade is compat.TorchNpuFitGrade.OUTSIDE  # reported
    assert matrix.torch_npu_cann_fit("2.7.1.post4", "9.2.0").grade is compat.TorchNpuFitGrade.UNKNOWN


def test_a_pairing_contradiction_becomes_one_conflict_row_with_both_sources(data: Path) -> None:
    (data / "sources" / NOTES.format("v2.9.0-26.2.0", "en")).write_text(
        "<!-- source: https://example.invalid/v2.9.0-26.2.0/release_notes.md -->\n<!-- retrieved: 2026-12-02 -->\n"
        "## Version Compatibility\n\n|Ascend Extension for PyTorch Version|CANN Version|-|\n|--|--|--|\n"
        "|26.2.0|CANN 9.2.0|-|\n\n"
        "<table><thead><tr><th>TorchNPU</th></tr><tr><th>9.1.X</th></tr></thead><tbody>"
        "<tr><td>7.3.X</td><td>N</td></tr></tbody></table>\n",
        encoding="utf-8",
    )
    update = tool.regenerate(data)
    (conflict,) = update.conflicts
    assert conflict.startswith("PTA 7.3.X with CANN 9.1.X: N in https://example.invalid/v2.9.0-26.2.0/")
    assert "Y in github:Ascend/pytorch@928743e649ee25c8da47670791b2f7fee34fd3b0" in conflict
    assert 'add      windows pta = ["26.2.0"] cann = ["9.2.0"] status = "documented"' in update.report
    (data / "torch_npu.toml").write_text(update.torch_npu_toml, encoding="utf-8")
    matrix = compat.load(data)
    (window,) = [w for w in matrix.windows if w.provenance.status is Status.CONFLICT]
    assert window.kind == "incompatible" and len(window.provenance.source) == 3  # N + the zh and en Y
    # sources disagree: a note (unverified), neither ok nor an error
    assert matrix.torch_npu_cann_fit("2.9.0", "9.1.0").grade is compat.TorchNpuFitGrade.UNVERIFIED
    assert matrix.torch_npu_cann_fit("2.9.0", "9.0.0").grade is compat.TorchNpuFitGrade.WINDOW


# --- CANN release notes in the Chinese layout -----------------------------------------------------


@pytest.mark.parametrize(
    "name, cann, hdks",
    [
        ("cann-8.5.0-release-notes.zh.txt", "8.5.0", ["25.5.X", "25.3.X", "25.2.X", "25.0.X"]),
        ("cann-8.5.0.alpha001-release-notes.zh.txt", "8.5.0.alpha001", ["25.2.X"]),  # header cells run together
    ],
)
def test_the_chinese_layout_of_a_cann_release_note(name: str, cann: str, hdks: list[str]) -> None:
    notes = tool.parse_release_notes_zh(tool.read_saved(SHIPPED / "sources" / name).text)
    assert notes.mapping == () and notes.compatibility == tuple((cann, hdk, True) for hdk in hdks)


def test_the_chinese_rows_are_generated_with_their_source() -> None:
    matrix = compat.load(SHIPPED)
    verdict = matrix.driver_fit("8.5.0", "25.3.rc1")
    assert verdict.fit is DriverFit.COMPATIBLE
    assert any(
        "saved: compat/sources/cann-8.5.0-release-notes.zh.txt" in s
        for r in verdict.evidence
        for s in r.provenance.source
    )


def test_a_chinese_note_without_its_table_is_refused() -> None:
    with pytest.raises(SystemExit, match="no 'CANN <version> | Ascend HDK"):
        tool.parse_release_notes_zh("CANN版本兼容性\n详见兼容性查询助手\n")


def test_the_9_1_0_note_column_of_two_hdk_lines_reads_the_atlas_350_one() -> None:
    notes = tool.parse_release_notes(tool.read_saved(SHIPPED / "sources" / "cann-9.1.0-release-notes.txt").text)
    assert notes.mapping == (("9.1.0", "26.0.RC1"),)
    assert ("9.1.X", "26.0.RC1/25.7.RC1", True) in notes.compatibility
    matrix = compat.load(SHIPPED)
    atlas_350 = {"applies_to": ("Atlas 350 A5",), "hdk_line": "ascend950"}
    assert matrix.driver_fit("9.0.0", "25.7.rc1", **atlas_350).fit is DriverFit.COMPATIBLE  # type: ignore[arg-type]


def test_the_update_names_each_row_it_adds_and_removes(data: Path) -> None:
    _rewrite_source(data, "cann-9.1.0-release-notes.txt", "9.1.X N Y Y Y Y Y", "9.1.X N N Y Y Y Y")
    report = tool.regenerate(data).report  # the 9.1.1 and 9.2.0 notes still say Y for 25.2.X
    assert 'add      hdk cann = ["9.1.X"] kind = "incompatible" hdk = ["25.2.X"] status = "conflict"' in report
    assert (
        'add      hdk cann = ["9.1.X"] kind = "compatible" hdk = ["25.3.X", "25.5.X", "26.0.RC1"] status = "documented"'
        in report
    )
    assert any(line.startswith('remove   hdk cann = ["9.1.X"] kind = "compatible" hdk = ["25.2.X",') for line in report)
    assert any(line.startswith("conflict CANN 9.1.X with HDK 25.2.X: Y in ") for line in report)


def test_a_family_row_and_a_release_row_that_disagree_are_one_conflict(data: Path) -> None:
    # "9.1.X: Y" in the 9.1.x/9.2.0 notes; a later note that says "9.1.0: N" for HDK 25.3.X
    (data / "sources" / "cann-9.3.0-release-notes.txt").write_text(
        "# source: https://example.invalid/9.3.0/release-notes.md\n# retrieved: 2026-12-02\n"
        "CANN and Ascend HDK Version Compatibility\nCANN Driver Version (Ascend HDK)\n25.3.x\n9.1.0 N\n",
        encoding="utf-8",
    )
    update = tool.regenerate(data)
    assert any(c.startswith("CANN 9.1.0 with HDK 25.3.X: Y in ") for c in update.conflicts)
    assert any(c.startswith("CANN 9.1.X with HDK 25.3.X: Y in ") and "example.invalid" in c for c in update.conflicts)
    (data / "cann.toml").write_text(update.cann_toml, encoding="utf-8")
    verdict = compat.load(data).driver_fit("9.1.0", "25.3.rc1")
    assert {r.provenance.status for r in verdict.evidence} == {Status.CONFLICT}


# --- per-chip ops packages --------------------------------------------------------------------------


def test_the_conda_listing_names_each_chips_ops_package_of_a_release() -> None:
    found = tool.parse_conda_listing(tool.read_saved(SHIPPED / "sources" / tool.CONDA_LISTING).text)
    assert ("9.0.0", "ascend950", "Ascend-cann-950-ops") in found
    assert ("9.0.0", "ascend910_93", "Ascend-cann-A3-ops") in found  # cann-a3-ops
    assert ("9.0.0", "ascend310b", "Ascend-cann-310b-ops") in found
    assert len(found) == 6  # the 8.5.0.alpha002 kernels packages name no release


def test_ops_package_rows_are_generated_with_their_source() -> None:
    matrix = compat.load(SHIPPED)
    rows = {str(p.cann): p for p in matrix.ops_packages if p.compute_unit == "ascend950"}
    assert sorted(rows) == ["9.0.0", "9.0.1", "9.1.0.beta1", "9.1.0.beta3"]
    # both listings name the 9.0.0 package: one row carrying both sources
    assert [s.split("(saved: ")[1].split(",")[0] for s in rows["9.0.0"].provenance.source] == [
        "compat/sources/conda-ascend-channel-listing.md",
        "compat/sources/cann-container-image-ops-packages.txt",
        "compat/sources/hicann-asc-tools-quick_start-ops.zh.md",
        "compat/sources/hiascend-cann-9.0.0-instg_0093-conda-ops.zh.md",
    ]
    assert rows["9.0.1"].package == "Ascend-cann-950-ops" and rows["9.0.1"].provenance.status is Status.DOCUMENTED
    assert "cann-container-image@c5a67b3a747bb8d69c828516d24a25ad5def4bb9" in rows["9.0.1"].provenance.source[0]


def test_the_cann_images_name_the_ops_package_of_each_chip_and_release() -> None:
    found = tool.parse_image_ops_packages(_saved(tool.CANN_IMAGE_OPS).text)
    assert ("8.1.RC1", "ascend910_93", "Atlas-A3-cann-kernels") in found
    assert ("8.3.RC2", "ascend910", "Ascend-cann-kernels-910") in found
    assert ("8.5.1", "ascend910_93", "Ascend-cann-A3-ops") in found
    assert ("9.0.1", "ascend310p", "Ascend-cann-310p-ops") in found
    assert ("9.0.1", "ascend950", "Ascend-cann-950-ops") in found
    releases = {c for c, _, _ in found if "alpha" not in c and "beta" not in c}
    assert releases == {"8.1.RC1", "8.2.RC1", "8.2.RC2", "8.3.RC1", "8.3.RC2"} | {
        "8.5.0",
        "8.5.1",
        "8.5.2",
        "9.0.0",
        "9.0.1",
    }
    # 281 Dockerfile lines: 910b, a3, 310p (+910 from 8.2.RC1, +950 from 9.0.0), 14 pre-releases as themselves
    assert len(found) == len(set(found)) == 87
    # a pre-release keeps its own packaging: 8.5.0.alpha001 still installs the kernels packages
    assert ("8.5.0.alpha1", "ascend910_93", "Atlas-A3-cann-kernels") in found
    assert ("9.1.0.beta3", "ascend950", "Ascend-cann-950-ops") in found
    # the packaging changed at 8.5: kernels-<chip> up to 8.3.RC2, <chip>-ops from 8.5.0 on
    assert {p for c, _, p in found if c in ("8.5.0", "8.5.1", "8.5.2")} == {
        "Ascend-cann-910-ops",
        "Ascend-cann-910b-ops",
        "Ascend-cann-A3-ops",
        "Ascend-cann-310p-ops",
    }


_URL = "CANN_OPS_URL=https://example.invalid/CANN/{file}_linux-${{ARCH}}.run && \\"


@pytest.mark.parametrize(
    "line, expected",
    [
        # variants the saved copy does not hold: a newer release, an RC, a beta
        (
            "cann/9.2.0-a3-ubuntu24.04-py3.13/Dockerfile: " + _URL.format(file="Ascend-cann-A3-ops_9.2.0"),
            [("9.2.0", "ascend910_93", "Ascend-cann-A3-ops")],
        ),
        (
            "cann/8.0.rc3-910b-openeuler22.03-py3.9/Dockerfile: "
            + _URL.format(file="Ascend-cann-kernels-910b_8.0.RC3"),
            [("8.0.RC3", "ascend910b", "Ascend-cann-kernels-910b")],
        ),
        (
            "cann/9.2.0-beta.1-950-ubuntu22.04-py3.12/Dockerfile: "
            + _URL.format(file="Ascend-cann-950-ops_9.2.0-beta.1"),
            [("9.2.0.beta1", "ascend950", "Ascend-cann-950-ops")],
        ),
    ],
)
def test_an_image_ops_line_not_in_the_copy(line, expected) -> None:
    assert tool.parse_image_ops_packages("# header\n" + line + "\n") == expected


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "cann/9.0.1-a3-ubuntu22.04-py3.12/Dockerfile: " + _URL.format(file="Ascend-cann-910b-ops_9.0.1"),
            "installs Ascend-cann-910b-ops_9.0.1 .chip 910b, CANN 9.0.1.; expected chip a3, CANN 9.0.1",
        ),
        (
            "cann/9.0.1-a3-ubuntu22.04-py3.12/Dockerfile: " + _URL.format(file="Ascend-cann-A3-ops_9.0.0"),
            "expected chip a3, CANN 9.0.1",
        ),
        (
            "cann/9.0.1-a3-ubuntu22.04-py3.12/Dockerfile: RUN wget https://example.invalid/cann.run",
            "expected an image tag and a run package",
        ),
    ],
)
def test_an_image_ops_line_that_is_not_what_it_says_is_refused(line, message) -> None:
    with pytest.raises(SystemExit, match=message):
        tool.parse_image_ops_packages(line + "\n")


def test_an_install_steps_per_product_list_names_each_products_ops_package() -> None:
    found = tool.parse_product_ops_list(_saved(tool.PRODUCT_OPS).text)
    assert found == [
        ("9.0.0", "ascend910b", "Ascend-cann-910b-ops"),  # Atlas A2 训练系列产品/Atlas A2 推理系列产品
        ("9.0.0", "ascend910_93", "Ascend-cann-A3-ops"),  # Atlas A3 …
        ("9.0.0", "ascend950", "Ascend-cann-950-ops"),  # Ascend 950PR/Ascend 950DT
    ]


_LINK = "[ops aarch64包](<download host>/x/{file}_linux-aarch64.run)"


@pytest.mark.parametrize(
    "line, expected",
    [
        # products the saved copy does not list
        (
            "- Atlas 200I/500 A2 推理产品：" + _LINK.format(file="Ascend-cann-310b-ops_9.1.0"),
            [("9.1.0", "ascend310b", "Ascend-cann-310b-ops")],
        ),
        (
            "- Atlas 推理系列产品：" + _LINK.format(file="Ascend-cann-310p-ops_9.2.0"),
            [("9.2.0", "ascend310p", "Ascend-cann-310p-ops")],
        ),
        (
            "- Atlas 350 加速卡：" + _LINK.format(file="Ascend-cann-950-ops_9.1.0-beta.3"),
            [("9.1.0.beta3", "ascend950", "Ascend-cann-950-ops")],
        ),
    ],
)
def test_a_product_line_not_in_the_copy(line, expected) -> None:
    assert tool.parse_product_ops_list("intro\n" + line + "\n") == expected


@pytest.mark.parametrize(
    "line, message",
    [
        ("- Atlas A3 训练系列产品：" + _LINK.format(file="Ascend-cann-910b-ops_9.0.0"), "a package of chip 910b"),
        ("- Atlas 900 超节点：" + _LINK.format(file="Ascend-cann-A3-ops_9.0.0"), "'Atlas 900 超节点' has no known"),
        (
            "- Atlas A2 训练系列产品/Atlas A3 推理系列产品：" + _LINK.format(file="Ascend-cann-A3-ops_9.0.0"),
            "expected one compute unit and one package",
        ),
    ],
)
def test_a_product_line_that_does_not_add_up_is_refused(line, message) -> None:
    with pytest.raises(SystemExit, match=message):
        tool.parse_product_ops_list(line + "\n")


def test_the_install_guides_ops_table_names_each_products_package() -> None:
    found = tool.parse_install_guide_ops(_saved("hiascend-cann-8.5.0-instg_0093-conda-ops.zh.md").text)
    assert found == [
        ("8.5.0", "ascend910_93", "Ascend-cann-A3-ops"),  # Atlas A3 系列产品: cann-a3-ops
        ("8.5.0", "ascend910b", "Ascend-cann-910b-ops"),
        ("8.5.0", "ascend910", "Ascend-cann-910-ops"),
        ("8.5.0", "ascend310p", "Ascend-cann-310p-ops"),  # served as cann-310P-ops
        ("8.5.0", "ascend310b", "Ascend-cann-310b-ops"),  # Atlas 200I/500 A2 推理产品
    ]
    beta = tool.parse_install_guide_ops(_saved("hiascend-cann-9.0.0.beta2-instg_0093-conda-ops.zh.md").text)
    assert ("9.0.0.beta2", "ascend310b", "Ascend-cann-310b-ops") in beta and len(beta) == 5
    # the 9.0.0 copy ends inside its 310B command: that row names nothing
    cut = tool.parse_install_guide_ops(_saved("hiascend-cann-9.0.0-instg_0093-conda-ops.zh.md").text)
    assert [unit for _, unit, _ in cut] == ["ascend950", "ascend910_93", "ascend910b", "ascend910", "ascend310p"]


def test_the_310b_ops_rows_carry_the_install_guide_as_their_source() -> None:
    rows = {str(p.cann): p for p in compat.load(SHIPPED).ops_packages if p.compute_unit == "ascend310b"}
    assert sorted(rows) == ["8.5.0", "9.0.0", "9.0.0.beta2"]
    assert any("canncommercial/850/softwareinst/instg/instg_0093" in s for s in rows["8.5.0"].provenance.source)
    assert rows["8.5.0"].package == "Ascend-cann-310b-ops" and rows["8.5.0"].provenance.status is Status.DOCUMENTED


@pytest.mark.parametrize(
    "table, expected",
    [
        # rows and releases the saved copies do not hold
        (
            "Atlas 200I/500 A2 推理产品\n\n1\nconda install ascend::cann-310b-ops==9.1.0",
            [("9.1.0", "ascend310b", "Ascend-cann-310b-ops")],
        ),
        (
            "Atlas 350 加速卡\n1\nconda install ascend::cann-950-ops==9.1.0.beta.3",
            [("9.1.0.beta3", "ascend950", "Ascend-cann-950-ops")],
        ),
        (
            "Atlas A3 系列产品\n1\nconda install ascend::cann-A3-ops==9.2.0",
            [("9.2.0", "ascend910_93", "Ascend-cann-A3-ops")],
        ),
        ("Atlas 推理系列产品\n1\nconda install ascend::cann-310p", []),  # cut before its version
    ],
)
def test_an_install_guide_ops_row_not_in_the_copies(table, expected) -> None:
    assert tool.parse_install_guide_ops("表1 安装ops算子包\n" + table + "\n") == expected


@pytest.mark.parametrize(
    "table, message",
    [
        ("Atlas A2 系列产品\n1\nconda install ascend::cann-310b-ops==9.0.0", "a package of chip 310b"),
        ("Atlas 900 超节点\n1\nconda install ascend::cann-a3-ops==9.0.0", "'Atlas 900 超节点' has no known"),
        ("产品类型\n1\nconda install ascend::cann-a3-ops==9.0.0", "no product type above it"),
    ],
)
def test_an_install_guide_ops_row_that_does_not_add_up_is_refused(table, message) -> None:
    with pytest.raises(SystemExit, match=message):
        tool.parse_install_guide_ops(table + "\n")


def test_listings_naming_two_packages_for_one_release_are_a_conflict_with_both_sources() -> None:
    a = tool.Saved("a.md", "https://a.example", "2026-12-04", "")
    b = tool.Saved("b.txt", "github:x/y@1:z", "2026-12-04", "")
    rows, conflicts = tool.ops_rows(
        [
            (a, [("9.0.0", "ascend910_93", "Ascend-cann-A3-ops"), ("9.0.0", "ascend910b", "Ascend-cann-910b-ops")]),
            (b, [("9.0.0", "ascend910_93", "Atlas-A3-cann-ops"), ("9.0.0", "ascend910b", "Ascend-cann-910b-ops")]),
        ]
    )
    a3 = [r for r in rows if r["compute_unit"] == "ascend910_93"]
    assert {r["package"] for r in a3} == {"Ascend-cann-A3-ops", "Atlas-A3-cann-ops"}
    assert all(r["status"] == "conflict" and r["source"] == [a.citation, b.citation] for r in a3)
    (b910,) = [r for r in rows if r["compute_unit"] == "ascend910b"]
    assert b910["status"] == "documented" and b910["source"] == [a.citation, b.citation]
    (line,) = conflicts
    assert "CANN 9.0.0 ascend910_93" in line and "Ascend-cann-A3-ops (https://a.example" in line


def test_a_listing_outranks_a_release_rows_inferred_name_and_a_conflict_says_so() -> None:
    matrix = compat.load(SHIPPED)
    # 8.5.1's release row infers its A3 package; the official image documents it
    assert matrix.ops_package("8.5.1", "ascend910_93") == ("Ascend-cann-A3-ops", Status.DOCUMENTED)
    assert matrix.ops_package("8.1.RC1", "ascend910_93") == ("Atlas-A3-cann-kernels", Status.DOCUMENTED)
    # a pre-release is its own row: 8.5.0.alpha001 was inferred as the 8.5.0 name, wrongly
    assert matrix.ops_package("8.5.0.alpha001", "ascend910_93") == ("Atlas-A3-cann-kernels", Status.DOCUMENTED)
    # before the images (8.0.0) it stays inferred
    assert matrix.ops_package("8.0.0", "ascend910_93") == ("Atlas-A3-cann-kernels", Status.INFERRED)
    # every release row's documented name agrees with the listings'
    for row in matrix.ops_packages:
        release = matrix.cann_release(row.cann)
        if release is not None and row.compute_unit in release.packages:
            assert release.packages[row.compute_unit] == row.package, (str(row.cann), row.compute_unit)
    (listed,) = [p for p in matrix.ops_packages if str(p.cann) == "9.0.1" and p.compute_unit == "ascend950"]
    other = dataclasses.replace(listed, package="Ascend-cann-950x-ops")
    disagreeing = dataclasses.replace(matrix, ops_packages=(listed, other))
    assert disagreeing.ops_package("9.0.1", "ascend950") == ("Ascend-cann-950-ops", Status.CONFLICT)


def test_an_ops_package_of_an_unknown_chip_is_refused() -> None:
    with pytest.raises(SystemExit, match="cann-960-ops names a chip without a known compute unit"):
        tool.parse_conda_listing("| cann-960-ops | 9.3.0 | MetaData package | Dec 1, 2026 | — |\n")


# --- MindIE version tables ------------------------------------------------------------------------------


def test_the_mindie_release_table_pairs_cann_with_pta() -> None:
    pairings = tool.parse_mindie(tool.read_saved(SHIPPED / "sources" / "mindie-26.0.0-release.md").text)
    assert pairings == [
        tool.Pairing("7.3.0", "8.5.1", True),
        tool.Pairing("7.3.0", "8.5.0", True),
        tool.Pairing("7.2.0", "8.3.RC2", True),
        tool.Pairing("7.1.0", "8.2.RC2", True),
    ]


def test_the_mindie_install_guide_one_value_per_line() -> None:
    pairings = tool.parse_mindie(tool.read_saved(SHIPPED / "sources" / "mindie-2.3.0-instg_0094.en.txt").text)
    assert pairings == [tool.Pairing("7.2.0", "8.5.0", True), tool.Pairing("7.3.0", "8.5.0", True)]


def test_mindie_pairs_are_documented_with_their_source() -> None:
    # issue #22: "the same for MindIE's own version mapping (CANN 8.5.0 with PTA 7.2.0)"
    fit = compat.load(SHIPPED).torch_npu_cann_fit("2.1.0.post17", "8.5.0")  # PTA 7.2.0
    assert fit.grade is compat.TorchNpuFitGrade.WINDOW and "mindie-2.3.0-instg_0094.en.txt" in fit.source


def test_a_mindie_text_without_its_table_is_refused() -> None:
    with pytest.raises(SystemExit, match="MindIE table: no MindIE"):
        tool.parse_mindie("MindIE\n\nsomething else\n")


# --- the layer above torch_npu: compat/stacks.toml (issue #22 items 1 and 5) -----------------------


def _saved(name: str):
    return tool.read_saved(SHIPPED / "sources" / name)


def test_the_vllm_ascend_release_matrix_rows_with_na_and_two_vllm():
    rows = {r.version: r for r in tool.parse_vllm_ascend_matrix(_saved(tool.VLLM_ASCEND_MATRIX).text)}
    newest = rows["0.23.0"]
    assert (newest.vllm, newest.cann, newest.torch, newest.torch_npu, newest.triton_ascend) == (
        ("0.23.0",),
        "9.1.0",
        "2.10.0",
        "2.10.0.post4",
        "3.2.2",
    )
    assert rows["0.10.1rc1"].vllm == ("0.10.1", "0.10.1.1") and rows["0.12.0rc1"].triton_ascend is None
    assert rows["0.11.0"].python == ">=3.9,<3.12" and rows["0.11.0"].cann == "8.3.RC2"
    assert "main" not in rows and len(rows) == 36


def test_the_triton_ascend_cann_table_as_served_one_cann_per_line():
    found = dict(tool.parse_triton_cann(_saved(tool.TRITON_CANN).text))
    assert found == {
        "3.2.1": ("9.0.0",),
        "3.2.0": ("8.5.0",),
        "3.2.0rc4": ("8.3.RC2", "8.3.RC1", "8.5.0.alpha1"),  # both editions' tables merged
    }


def test_the_triton_ascend_release_note_glibc_floor():
    assert tool.parse_triton_glibc(_saved(tool.TRITON_GLIBC).text) == [("3.2.0", "2.27")]


@pytest.mark.parametrize(
    ("name", "stack"),
    [
        ("vllm-ascend-v0.23.0-Dockerfile.txt", ("9.1.0", "910b", "3.12", "0.23.0", "0.23.0", None)),
        ("vllm-ascend-v0.23.0-Dockerfile.a5.txt", ("9.1.0", "950", "3.12", "0.23.0", "0.23.0", None)),
        ("vllm-ascend-v0.25.1rc1-Dockerfile.310p.txt", ("9.1.0.beta1", "310p", "3.12", "0.25.1rc1", "0.25.1", None)),
        ("vllm-ascend-v0.11.0-Dockerfile.a3.txt", ("8.3.RC2", "a3", "3.11", "0.11.0", "0.11.0", None)),
        (
            "cann-container-image-9.0.1-910b-ubuntu22.04-py3.12-Dockerfile.txt",
            ("9.0.1", "910b", "3.12", None, None, "9.0.1"),
        ),
    ],
)
def test_official_dockerfiles_are_known_good_stacks(name, stack):
    parsed = tool.parse_dockerfile(_saved(name).text)
    assert (parsed.cann, parsed.chip, parsed.python, parsed.vllm_ascend, parsed.vllm, parsed.nnal) == stack


def test_the_cann_image_ops_package_of_each_chip():
    ops = {
        n: tool.parse_dockerfile(_saved(n).text).ops_package
        for n in tool.load_sources(SHIPPED / "sources")
        if n.startswith("cann-container-image-") and "Dockerfile" in n
    }
    assert sorted(ops.values()) == ["Ascend-cann-910b-ops", "Ascend-cann-950-ops", "Ascend-cann-A3-ops"]


def test_the_cann_image_tag_list():
    stacks = tool.parse_image_tags(_saved(tool.CANN_IMAGE_TAGS).text)
    assert len(stacks) == 401
    assert tool.parse_image_tag("9.1.0-beta.3-950-ubuntu22.04-py3.12-devel") == tool.ImageStack(
        "9.1.0.beta3", "950", "3.12", "ubuntu22.04"
    )
    assert tool.parse_image_tag("README.md") is None


def test_the_mindie_table_rows_name_the_mindie_release():
    rows = tool.parse_mindie_rows(_saved(tool.MINDIE_TABLE).text)
    assert ("2.3.0", "8.5.0", "7.3.0") in rows and ("2.2.RC1", "8.3.RC2", "7.2.0") in rows


def test_stack_rows_carry_their_sources_and_a_new_copy_is_reported(data: Path) -> None:
    matrix = compat.load(SHIPPED)
    retrieved = ("retrieved 2026-12-01)", "retrieved 2026-12-04)")
    assert all(r.provenance.source[0].endswith(retrieved) for r in matrix.vllm_ascend + matrix.images)
    policy = data / "sources" / tool.VLLM_ASCEND_MATRIX
    text = policy.read_text(encoding="utf-8")
    row = "| v0.23.0     | v0.23.0 "
    new = "| v0.24.0 | v0.24.0 | >= 3.10, < 3.13 | 9.2.0 | 2.10.0 / 2.10.0.post5 | 3.2.3 | x |\n"
    policy.write_text(text.replace(row, new + row, 1))
    update = tool.regenerate(data)
    assert any(line.startswith('add      stacks [[vllm_ascend]] version = "0.24.0"') for line in update.report)


def test_the_triton_ascend_wheels_on_the_index_give_its_glibc_floor() -> None:
    assert tool.parse_wheel_glibc(_saved(tool.TRITON_WHEELS).text) == [("3.2.0", "2.27")]
    (row,) = [f for f in compat.load(SHIPPED).glibc_floors if str(f.version) == "3.2.0"]
    assert row.glibc == "2.27" and row.provenance.status is Status.DOCUMENTED
    assert [s.split("(saved: ")[1].split(",")[0] for s in row.provenance.source] == [
        "compat/sources/triton-ascend-release_note.en.md",  # "glibc 2.27+"
        "compat/sources/triton-ascend-wheel-metadata.json",  # manylinux_2_27 wheels
    ]


def _wheels(*files: tuple[str, str]) -> str:
    return json.dumps({"wheels": [{"version": v, "file": f} for v, f in files]})


@pytest.mark.parametrize(
    "files, floors",
    [
        # releases and tags the saved copy does not hold
        ((("3.3.0", "triton_ascend-3.3.0-cp312-cp312-manylinux_2_28_aarch64.whl"),), [("3.3.0", "2.28")]),
        (
            (
                ("3.2.1", "triton_ascend-3.2.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"),
                ("3.2.1", "triton_ascend-3.2.1-cp312-cp312-manylinux_2_27_aarch64.whl"),
            ),
            [("3.2.1", "2.27")],
        ),
        ((("3.4.0rc1", "triton_ascend-3.4.0rc1-cp313-cp313-manylinux_2_34_x86_64.whl"),), [("3.4.0rc1", "2.34")]),
    ],
)
def test_a_wheel_listing_not_in_the_copy(files, floors) -> None:
    assert tool.parse_wheel_glibc(_wheels(*files)) == floors


@pytest.mark.parametrize(
    "files, message",
    [
        ((("3.2.0", "triton_ascend-3.2.0-cp311-cp311-linux_x86_64.whl"),), "has no manylinux_X_Y tag"),
        (
            (
                ("3.2.0", "triton_ascend-3.2.0-cp311-cp311-manylinux_2_27_x86_64.whl"),
                ("3.2.0", "triton_ascend-3.2.0-cp311-cp311-manylinux_2_31_aarch64.whl"),
            ),
            "need different glibc \\(2.27, 2.31\\)",
        ),
    ],
)
def test_a_wheel_listing_that_does_not_add_up_is_refused(files, message) -> None:
    with pytest.raises(SystemExit, match=message):
        tool.parse_wheel_glibc(_wheels(*files))


def test_wheels_that_contradict_the_release_note_are_a_glibc_conflict_and_the_lower_floor_is_judged(
    data: Path,
) -> None:
    copy = data / "sources" / tool.TRITON_WHEELS
    copy.write_text(copy.read_text(encoding="utf-8").replace("manylinux_2_27_aarch64", "manylinux_2_31_aarch64"))
    copy.write_text(copy.read_text(encoding="utf-8").replace("manylinux_2_27_x86_64", "manylinux_2_31_x86_64"))
    update = tool.regenerate(data)
    # manylinux_2_31_<arch>.manylinux_2_28_<arch>: the lowest tag, 2.28, is the wheels' floor
    assert 'add      stacks [[glibc_floor]] package = "triton-ascend" version = "3.2.0" glibc = "2.28" (conflict)' in (
        update.report
    )
    (data / "stacks.toml").write_text(update.stacks_toml, encoding="utf-8")
    matrix = compat.load(data)
    rows = [f for f in matrix.glibc_floors if str(f.version) == "3.2.0"]
    assert sorted(r.glibc for r in rows) == ["2.27", "2.28"]
    assert {r.provenance.status for r in rows} == {Status.CONFLICT}
    assert "glibc 2.28" in next(r for r in rows if r.glibc == "2.27").provenance.conflict
    # the check judges the lower floor: on glibc 2.27 the disputed 2.28 is no error
    from tests.checks.test_stack import _dist, host

    snap = host("8.5.0", _dist("triton-ascend", "3.2.0"), glibc="2.27")
    assert [f.severity.value for f in findings_of(snap, "ASC-STACK-TRITON", matrix)][0] == "ok"
    snap = host("8.5.0", _dist("triton-ascend", "3.2.0"), glibc="2.26")
    assert "triton-ascend 3.2.0 needs glibc 2.27" in [f.title for f in findings_of(snap, "ASC-STACK-TRITON", matrix)]


def test_check_fails_when_only_a_rows_sources_differ(data: Path, monkeypatch, capsys) -> None:
    stacks = data / "stacks.toml"
    text = stacks.read_text(encoding="utf-8")
    wheel_source = next(line for line in text.splitlines() if "triton-ascend-wheel-metadata.json" in line)
    stacks.write_text(text.replace(wheel_source + "\n", "", 1), encoding="utf-8")
    monkeypatch.setattr(tool, "DATA", data)
    assert tool.main(["--check"]) == 1
    assert 'change   stacks [[glibc_floor]] package = "triton-ascend" version = "3.2.0" glibc = "2.27"' in (
        capsys.readouterr().out
    )


def test_sglang_npu_dockerfile_fills_its_args_and_names_its_wheels():
    parsed = tool.parse_dockerfile(_saved("sglang-npu-950.Dockerfile.txt").text)
    assert (parsed.cann, parsed.chip, parsed.python, parsed.os) == ("9.1.0", "950", "3.12", "ubuntu22.04")
    assert (parsed.torch_npu, parsed.triton_ascend, parsed.sglang) == ("2.10.0.post4", "3.2.2", "main")


def test_sglang_a2_a3_dockerfile():
    parsed = tool.parse_dockerfile(_saved("sglang-npu.Dockerfile.txt").text)
    assert (parsed.cann, parsed.chip, parsed.python) == ("8.5.0", "a3", "3.11")
    assert (parsed.torch_npu, parsed.triton_ascend, parsed.sglang) == ("2.10.0", "3.2.1", "main")


def test_vllm_ascend_dockerfiles_pin_their_triton_ascend():
    pins = {
        n: tool.parse_dockerfile(_saved(n).text).triton_ascend
        for n in ("vllm-ascend-v0.25.1rc1-Dockerfile.txt", "vllm-ascend-v0.23.0-Dockerfile.a5.txt")
    }
    assert list(pins.values()) == ["3.2.1", "3.2.2"]
    # the 310P image uninstalls it and pins none
    assert tool.parse_dockerfile(_saved("vllm-ascend-v0.25.1rc1-Dockerfile.310p.txt").text).triton_ascend is None


@pytest.mark.parametrize(
    "line, pinned",
    [
        # spellings the saved copies do not hold
        ("RUN pip3 install --no-cache-dir triton_ascend==3.3.0rc1 && \\", "3.3.0rc1"),
        ("    python3 -m pip install pybind11 triton-ascend==3.2.2.post1", "3.2.2.post1"),
        ("RUN pip install triton-ascend>=3.2.0", None),  # a range names no version
        ("RUN pip uninstall -y triton-ascend && echo triton-ascend==3.2.0", None),
    ],
)
def test_a_pip_pin_in_a_dockerfile(line, pinned):
    text = f"FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\n{line}\n"
    assert tool.parse_dockerfile(text).triton_ascend == pinned


def test_a_dockerfile_wheel_url_with_a_local_label():
    wheel = "x/triton_ascend-3.2.0%2Bgitb0ea0850-cp311-cp311-linux_aarch64.whl"
    text = f'FROM quay.io/ascend/cann:8.2.rc1-a3-ubuntu22.04-py3.11\nARG U="{wheel}"\n'
    assert tool.parse_dockerfile(text).triton_ascend == "3.2.0+gitb0ea0850"
    with pytest.raises(SystemExit, match="no 'FROM quay.io/ascend/cann"):
        tool.parse_dockerfile("FROM ubuntu:22.04\n")


def test_the_supported_products_and_a_maintainers_refusal():
    assert tool.parse_supported_products(_saved(tool.TRITON_PRODUCTS).text) == ("ascend910b", "ascend910_93")
    assert tool.parse_supported_products("Supported Ascend products: Atlas A2/A3/950 series") == (
        "ascend910b",
        "ascend910_93",
        "ascend950",
    )
    assert tool.parse_no_support(_saved(tool.TRITON_NO_SUPPORT).text) == ("ascend310p",)
    with pytest.raises(SystemExit):
        tool.parse_no_support("we will support it soon")


def test_tilelang_cann_changes_are_read_from_the_saved_pull_requests() -> None:
    changes = tool.parse_tilelang_cann(_saved(tool.TILELANG_CANN).text)
    assert [(c.cann, c.uses, c.has, c.fixed_in) for c in changes] == [
        (
            "8.5.X",
            ("bishengir",),
            ("adapt-triton-kernel", "adapt_triton_kernel"),
            "https://github.com/tile-ai/tilelang-ascend/pull/334",
        ),
        ("8.5.X", ("bishengir",), ("pkg_inc",), "https://github.com/tile-ai/tilelang-ascend/pull/346"),
    ]
    assert changes[0].change == "[AscendNPU-IR][JIT] Update jit to make CANN8.5 work"


def test_tilelang_cann_parser_reads_another_release_and_refuses_what_it_cannot_read() -> None:
    # variants: another CANN line, a fix that passes another option, one that adds another directory
    text = (
        "- 7/1/2026: TileLang now supports CANN 9.1. Check out Pull Request#900!\n"
        "## PR #900: https://github.com/tile-ai/tilelang-ascend/pull/900\n"
        "commit 0123\nAuthor: someone\nDate: Wed Jul 1 10:00:00 2026 +0000\n\n    [JIT] CANN 9.1\n\n"
        '+    _opt_option_list = ["--hivm-legalize-memref"]\n'
        "+        cc_cmd += [f\"-I{os.path.join(asc_path, 'include/new_rt')}\"]\n"
    )
    (change,) = tool.parse_tilelang_cann(text)
    assert (change.cann, change.has) == ("9.1.X", ("hivm-legalize-memref", "hivm_legalize_memref", "include/new_rt"))
    with pytest.raises(SystemExit, match="no 'now supports CANN X.Y' news line"):
        tool.parse_tilelang_cann(text.replace("now supports CANN 9.1", "works on CANN 9.1"))
    with pytest.raises(SystemExit, match="no option/include it adds"):
        tool.parse_tilelang_cann(text.split("\n+")[0])
