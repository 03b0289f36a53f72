"""ascenv.versions: Ascend version strings ordered as Huawei means them, ranges, PEP 440 helpers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascenv.errors import AscenvError, IncomparableVersions, InvalidVersion
from ascenv.versions import (
    AscendVersion,
    ProductLine,
    VersionRange,
    canonical,
    covers,
    parse_range_list,
    python_version,
    specifier_contains,
    split_local,
    torch_release,
)
from tests.conftest import CORPUS, load_capture

CANN, DRIVER, FIRMWARE, COMPONENT, INNER = (
    ProductLine.CANN,
    ProductLine.DRIVER,
    ProductLine.FIRMWARE,
    ProductLine.COMPONENT,
    ProductLine.INNER,
)


def v(text: str, line: ProductLine = CANN) -> AscendVersion:
    return AscendVersion.parse(text, line=line)


# Ascending order: release-to-release as torch_npu orders them (RC1 < RC2 < RC3 <
# X.Y.0.alphaN < X.Y.0 < X.(Y+1).RC1; github:Ascend/pytorch@9e73e708ab9350d203475609f36f8a43f6a0c2ab:
# torch_npu/csrc/core/npu/GetCANNInfo.cpp), plus alpha/beta below their base, patch above it,
# T builds in their own bucket, here below the first RC; new scheme alpha < beta < rc < final.
CANN_ORDER = [
    "6.3.RC2",
    "6.3.RC3",
    "6.3.RC3.1",
    "7.0.RC1",
    "7.0.0",
    "7.0.1",
    "8.0.T6",
    "8.0.T63",
    "8.0.RC1",
    "8.0.RC2.alpha003",
    "8.0.RC2.beta1",
    "8.0.RC2",
    "8.0.RC3",
    "8.0.RC3.20",
    "8.0.0.alpha001",
    "8.0.0.beta1",
    "8.0.0",
    "8.1.RC1",
    "8.2.RC1.alpha001",
    "8.2.RC1",
    "8.3.RC1",
    "8.5.0-beta.1",
    "8.5.0",
    "8.5.1",
    "9.0.0-beta.1",
    "9.0.0.beta2",
    "9.0.0",
    "9.1.0.beta.1",
    "9.1.0-beta.3",
    "9.1.0",
    "9.2.0-beta.2",
]
# Bundle RC vs file rc, patch bundles, builds; 2021/2022 numbering.
DRIVER_ORDER = [
    "21.0.2",
    "22.0.4.1",
    "23.0.rc2",
    "23.0.RC3",
    "23.0.0",
    "23.0.1",
    "23.0.2.1",
    "24.1.rc1",
    "24.1.rc1.b030",
    "24.1.rc2",
    "24.1.rc2.2",
    "24.1.rc3",
    "24.1.0",
    "24.1.0.b062",
    "25.0.rc1",
    "25.0.rc1.1",
    "25.3.rc1",
    "25.3.rc1.b020",
    "25.5.0",
    "26.0.RC1",
    "26.1.0",
    "26.1.0.b061",
]
FIRMWARE_ORDER = [
    "6.4.0.4.220",
    "7.1.0.6.220",
    "7.3.0.1.231",
    "7.5.0.1.129",
    "7.5.0.2.220",
    "7.7.0.1.231",
    "7.7.0.2.220",
]
COMPONENT_ORDER = [
    "1.84.15.1.310",
    "7.2.T11.0.B218",
    "7.5.T11.0.B081",
    "7.5.0.1.129",
    "7.6.0.1.220",
    "7.7.0.1.238",
    "8.2.0.0.201",
]
INNER_ORDER = [
    "V100R001C13SPC005B246",
    "V100R001C15SPC003B226",
    "V100R001C17B214",
    "V100R001C21B081",
    "V100R001C21SPC001B238",
    "V100R001C22SPC001B231",
    "V100R001C23B085",
    "V100R001C23SPC002B210",
]


@pytest.mark.parametrize(
    "line, order",
    [
        (CANN, CANN_ORDER),
        (DRIVER, DRIVER_ORDER),
        (FIRMWARE, FIRMWARE_ORDER),
        (COMPONENT, COMPONENT_ORDER),
        (INNER, INNER_ORDER),
    ],
)
def test_sorting_gives_the_documented_order(line: ProductLine, order: list) -> None:
    parsed = [v(text, line) for text in order]
    assert [str(x) for x in sorted(reversed(parsed))] == order
    for lower, higher in zip(parsed, parsed[1:]):
        assert lower < higher and higher > lower and lower != higher


@pytest.mark.parametrize(
    "text, line",
    [(t, CANN) for t in CANN_ORDER]
    + [(t, DRIVER) for t in DRIVER_ORDER]
    + [(t, INNER) for t in INNER_ORDER]
    + [("7.5.T11.0.B081", CANN), ("8.0.T63", COMPONENT)],
)
def test_raw_string_is_kept(text: str, line: ProductLine) -> None:
    parsed = v(text, line)
    assert str(parsed) == text and parsed.raw == text
    assert v(str(parsed), line) == parsed


def test_rc_case_does_not_matter_bundle_and_driver_file_are_the_same_release() -> None:
    # HDK bundles say 23.0.RC3, the driver's version.info says 23.0.rc3.
    assert v("23.0.RC3", DRIVER) == v("23.0.rc3", DRIVER)
    assert hash(v("23.0.RC3", DRIVER)) == hash(v("23.0.rc3", DRIVER))


def test_community_beta_label_maps_to_the_commercial_release() -> None:
    assert str(v("8.0.RC3.beta1").commercial()) == "8.0.RC3"
    assert str(v("8.0.0.beta1").commercial()) == "8.0.0"
    assert (
        v("8.0.RC3.alpha003").commercial() is not None and str(v("8.0.RC3.alpha003").commercial()) == "8.0.RC3.alpha003"
    )
    # From 8.5 on, beta is a real pre-release and stays one.
    assert str(v("9.0.0-beta.1").commercial()) == "9.0.0-beta.1"


def test_flags() -> None:
    assert v("8.0.T63").is_test_build and v("8.0.T63").is_prerelease
    assert v("8.2.RC1.alpha001").is_prerelease and not v("8.2.RC1").is_prerelease
    assert v("V100R001C22SPC001B231", INNER).train == "V100R001C22"
    assert v("8.1.RC1").release == (8, 1)


@pytest.mark.parametrize(
    "text, line",
    [
        ("", CANN),
        ("8", CANN),
        ("abc", CANN),
        ("8.0.RC", CANN),
        ("8.0.RC1.rc2", CANN),
        ("8.0.0..1", CANN),
        ("1.2.x", CANN),
        ("8.0.RC2 beta", CANN),
        ("8.0.alpha1", CANN),
        ("V100R001C22", DRIVER),
        ("24.1.rc2.b1.b2", DRIVER),
        ("V100R001", INNER),
        ("8.0.0", INNER),
        ("８.０.０", CANN),
        ("8.².0", CANN),
    ],
)
def test_invalid_text_raises_invalid_version_quoting_it(text: str, line: ProductLine) -> None:
    with pytest.raises(InvalidVersion) as caught:
        v(text, line)
    assert isinstance(caught.value, AscenvError)
    assert repr(text) in caught.value.message


def test_non_text_is_refused() -> None:
    with pytest.raises(InvalidVersion, match="must be text"):
        AscendVersion.parse(8.0, line=CANN)  # type: ignore[arg-type]


def test_ordering_across_product_lines_is_refused() -> None:
    # Driver and CANN numbers are unrelated series; 8.0.0 vs 8.0.0 means nothing.
    with pytest.raises(IncomparableVersions, match="different product lines"):
        v("8.0.0", CANN) < v("8.0.0", DRIVER)  # noqa: B015
    with pytest.raises(IncomparableVersions):
        v("7.7.0.1.231", FIRMWARE) >= v("7.7.0.1.238", COMPONENT)  # noqa: B015
    assert v("8.0.0", CANN) != v("8.0.0", DRIVER)
    assert len({v("8.0.0", CANN), v("8.0.0", DRIVER)}) == 2


# --- ranges, on the fields of real version.info files -------------------------------------------

NOTES_800IA2 = (
    CORPUS
    / "version_files"
    / "driver25.0.rc1.1_fw7.7.0.1.231_toolkit8.2.RC1_opp_kernel_nnal_mindie2.1.RC1_800IA2-notes.txt"
)


def field(text: str, key: str) -> str:
    return re.search(rf"^{key}=(.*)$", text, re.MULTILINE).group(1)


def test_driver_firmware_and_toolkit_ranges_of_one_real_host_agree() -> None:
    # One Atlas 800I A2: driver 25.0.rc1.1, firmware 7.7.0.1.231, toolkit 8.2.RC1 — a working host.
    text = load_capture(NOTES_800IA2)
    driver = v(field(text, "Version"), DRIVER)
    assert str(driver) == "25.0.rc1.1"
    firmware = v("7.7.0.1.231", FIRMWARE)
    fw_ranges = parse_range_list(field(text, "compatible_version_fw"), line=FIRMWARE)
    assert [str(r) for r in fw_ranges] == ["[7.0.0,7.7.99]"]
    assert fw_ranges[0].contains(firmware)
    drv_ranges = parse_range_list(field(text, "compatible_version_drv"), line=DRIVER)
    assert [str(r) for r in drv_ranges] == ["[23.0.0,23.0.0.]", "[24.0,24.0.]", "[24.1,24.1.]", "[25.0,25.0.]"]
    assert any(r.contains(driver) for r in drv_ranges)
    trains = parse_range_list(field(text, "compatible_version"), line=INNER)
    assert any(r.contains(v(field(text, "Innerversion"), INNER)) for r in trains)


def test_trailing_dot_upper_bound_means_the_whole_family() -> None:
    drv = VersionRange.parse("[23.0.0,23.0.0.]", line=DRIVER)
    assert drv.contains(v("23.0.0", DRIVER)) and drv.contains(v("23.0.0.1", DRIVER))
    assert not drv.contains(v("23.0.1", DRIVER)) and not drv.contains(v("23.0.rc3", DRIVER))
    family = VersionRange.parse("[24.1,24.1.]", line=DRIVER)
    assert all(family.contains(v(t, DRIVER)) for t in ["24.1.rc1", "24.1.rc2.2", "24.1.rc3.b999", "24.1.0"])
    assert not family.contains(v("24.2.0", DRIVER)) and not family.contains(v("24.0.0", DRIVER))
    # Without the dot the upper bound is a plain version: 7.7.99 ends the range.
    fw = VersionRange.parse("[7.0.0,7.2.99]", line=FIRMWARE)
    assert fw.contains(v("7.1.0.6.220", FIRMWARE))
    # driver 24.1.rc2 + fw 7.3.0.1.231 outside [7.0.0,7.2.99] broke a host.
    assert not fw.contains(v("7.3.0.1.231", FIRMWARE))


def test_huawei_table_families_and_open_ranges() -> None:
    family = VersionRange.parse("25.0.X", line=DRIVER)
    assert family.contains(v("25.0.RC1", DRIVER)) and family.contains(v("25.0.rc1.1", DRIVER))
    assert not family.contains(v("25.2.0", DRIVER))
    open_range = VersionRange.parse("[8.0.RC1,]", line=CANN)
    assert open_range.contains(v("9.1.0")) and not open_range.contains(v("7.0.0"))
    release = VersionRange.release_family("24.1.RC2", line=DRIVER)
    assert release.contains(v("24.1.rc2.2", DRIVER)) and not release.contains(v("24.1.rc3", DRIVER))


def test_inner_ranges_compare_trains_only() -> None:
    ranges = parse_range_list("[V100R001C13,V100R001C19],[V100R001C30]", line=INNER)
    assert ranges[0].contains(v("V100R001C19SPC001B124", INNER))  # driver 24.1.rc3
    assert not any(r.contains(v("V100R001C21SPC002B220", INNER)) for r in ranges)


@pytest.mark.parametrize("text", ["", "[7.0.0,7.2.99", "[a,b,c]", "7.0.0", "[]", "[,7.2.99]", "[7.0.0,7.2.99,8]"])
def test_bad_ranges_raise_invalid_version(text: str) -> None:
    with pytest.raises(InvalidVersion):
        VersionRange.parse(text, line=FIRMWARE)


@pytest.mark.parametrize("text", ["", "junk", "[7.0.0,7.2.99] junk", "[7.0.0,7.2.99],[x]"])
def test_bad_range_lists_raise_invalid_version(text: str) -> None:
    with pytest.raises(InvalidVersion):
        parse_range_list(text, line=FIRMWARE)


def test_range_refuses_another_line() -> None:
    with pytest.raises(IncomparableVersions):
        VersionRange.parse("[7.0.0,7.7.99]", line=FIRMWARE).contains(v("7.5.0", DRIVER))


# --- Python packages -----------------------------------------------------------------------------


def test_split_local_and_torch_release() -> None:
    assert split_local("2.1.0+cpu") == ("2.1.0", "+cpu")
    assert split_local("2.5.1+cpu.cxx11.abi") == ("2.5.1", "+cpu.cxx11.abi")
    assert split_local("2.12.0") == ("2.12.0", "")
    # these torch_npu versions all mean torch 2.1.0.
    for text in ["2.1.0rc1", "2.1.0.rc1", "2.1.0.post17", "2.1.0+cxx11-abi", "2.1.0+cpu"]:
        assert torch_release(text) == "2.1.0"
    with pytest.raises(InvalidVersion):
        torch_release("2.1")


def test_cpu_local_label_pitfall_with_explicit_prereleases() -> None:
    # ==2.1.0+cpu is not satisfied by PyPI's 2.1.0; ==2.12.0 is satisfied by 2.12.0+cpu.
    assert not specifier_contains("==2.1.0+cpu", "2.1.0", prereleases=True)
    assert specifier_contains("==2.1.0+cpu", "2.1.0+cpu", prereleases=True)
    assert specifier_contains("==2.12.0", "2.12.0+cpu", prereleases=True)
    assert specifier_contains(">=2.9", "2.10.0rc2", prereleases=True)
    assert not specifier_contains(">=2.9", "2.10.0rc2", prereleases=False)


def test_python_version_errors_quote_the_input() -> None:
    assert python_version("2.1.0.rc1") == python_version("2.1.0rc1")
    with pytest.raises(InvalidVersion, match="'24.1.rc2.2'"):
        python_version("24.1.rc2.2")
    with pytest.raises(InvalidVersion, match="'>>2'"):
        specifier_contains(">>2", "2.0", prereleases=True)


# --- properties ----------------------------------------------------------------------------------

TOKENS = st.sampled_from(
    [
        "8",
        "0",
        "24",
        "1",
        "RC1",
        "rc2",
        "T63",
        "alpha003",
        "beta",
        "beta1",
        "b030",
        "B081",
        "2",
        "220",
        "-",
        ".",
        "X",
        "",
        "V100R001C22",
        "SPC001",
        "rc",
        "²",
        " ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    text=st.one_of(
        st.text(max_size=30), st.lists(TOKENS, max_size=8).map(".".join), st.lists(TOKENS, max_size=8).map("".join)
    ),
    line=st.sampled_from(list(ProductLine)),
)
def test_parse_never_raises_anything_but_invalid_version(text: str, line: ProductLine) -> None:
    try:
        parsed = AscendVersion.parse(text, line=line)
    except InvalidVersion:
        return
    assert AscendVersion.parse(str(parsed), line=line) == parsed


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.sampled_from(CANN_ORDER), min_size=1, max_size=10))
def test_sorting_any_subset_keeps_the_documented_order(texts: list) -> None:
    ordered = [str(x) for x in sorted(v(t) for t in texts)]
    assert ordered == sorted(texts, key=CANN_ORDER.index)


@pytest.mark.parametrize(
    ("label", "release"),
    [
        ("9.0.0-beta.2", "9.0.0"),  # the new form: a pre-release of 9.0.0
        ("9.1.0-beta.3", "9.1.0"),
        ("8.5.0.alpha001", "8.5.0"),
        ("8.0.RC2.beta1", "8.0.RC2"),  # the old community label: commercial()
        ("9.1.0", "9.1.0"),
        ("8.0.T63", "8.0.T63"),  # a test build names no release
    ],
)
def test_release_target_maps_a_cann_label_to_its_release(label: str, release: str) -> None:
    assert AscendVersion.parse(label, line=ProductLine.CANN).release_target().raw == release


@pytest.mark.parametrize(
    "text, line, spelled",
    [
        ("8.3.rc1", ProductLine.CANN, "8.3.RC1"),
        ("9.0.0-beta.2", ProductLine.CANN, "9.0.0.beta2"),
        ("9.1.x", ProductLine.CANN, "9.1.X"),
        ("26.0.RC1", ProductLine.DRIVER, "26.0.RC1"),
        ("25.7.rc1.6", ProductLine.DRIVER, "25.7.RC1.6"),
        ("7.3.X", ProductLine.PTA, "7.3.X"),
    ],
)
def test_canonical_spelling_is_one_per_version(text: str, line: ProductLine, spelled: str) -> None:
    assert canonical(text, line=line) == spelled
    if not spelled.endswith(".X"):  # the canonical spelling reads back as the same version
        assert AscendVersion.parse(spelled, line=line) == AscendVersion.parse(text, line=line)


def test_a_family_covers_its_releases_not_the_reverse() -> None:
    assert covers("9.1.X", "9.1.0", line=ProductLine.CANN) and covers("9.1.X", "9.1.x", line=ProductLine.CANN)
    assert not covers("9.1.0", "9.1.X", line=ProductLine.CANN)
    assert not covers("9.1.X", "9.10.0", line=ProductLine.CANN)  # a prefix of digits is not a family
    assert covers("8.3.RC1", "8.3.rc1", line=ProductLine.CANN)
