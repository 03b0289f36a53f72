"""ascenv.vendor_layout on hostile operator description files (December 2026 adversarial report
P3/V1): every JSON level type-checked, deep nesting and lone surrogates read as per-file problems."""

from __future__ import annotations

import json
from typing import Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv import vendor_layout as layout

TBE = "op_impl/ai_core/tbe"
CONFIG = f"{TBE}/kernel/config/ascend910b/add.json"
BINARY_INFO = f"{TBE}/kernel/config/ascend910b/binary_info_config.json"
OPS_INFO = f"{TBE}/config/ascend910b/aic-ascend910b-ops-info.json"
GOOD = json.dumps({"binList": [{"simplifiedKey": ["AddCustom/d=0,p=0/1,2/1,2"]}]}).encode()


def describe(files: dict[str, bytes]) -> layout.VendorLayout:
    def read(rel: str) -> Optional[bytes]:
        return files.get(rel)

    return layout.describe("v", files, read)


@pytest.mark.parametrize(
    "text",
    [
        b'{"binList": 5}',  # the report's three shapes
        b'{"binList":[{"binInfo":"x"}]}',
        b"[" * 100_000,
        b'{"binList": [5, "x", null, {"binInfo": {"jsonFilePath": 7}}]}',  # variants
        b'{"binList": [{"simplifiedKey": [{}]}, {"simplifiedKey": "Abs"}, {"binInfo": []}]}',
        b"[" * 500 + b"]" * 500,
        b'"just a string"',
        b"\xff\xfe not utf-8",
        b'{"binList": null}',
    ],
)
def test_a_malformed_kernel_config_is_a_problem_of_that_file_only(text: bytes) -> None:
    other = f"{TBE}/kernel/config/ascend910b/add_custom.json"
    found = describe({CONFIG: text, other: GOOD})
    assert found.kernel_ops == {"ascend910b": ("AddCustom",)}  # the good file is still read
    assert all(isinstance(p, str) for p in found.problems)


@pytest.mark.parametrize(
    "path, text",
    [
        (OPS_INFO, b"[1, 2]"),
        (OPS_INFO, b"{" * 50_000),
        (BINARY_INFO, b"[]"),
        (BINARY_INFO, b'{"AddCustom": 5, "MulCustom": {}}'),
    ],
)
def test_ops_info_and_binary_info_shapes(path: str, text: bytes) -> None:
    found = describe({path: text})
    assert found.op_types in ((), ("MulCustom",))
    assert found.problems or found.op_types == ("MulCustom",)


def test_deep_nesting_is_named_as_such() -> None:
    (problem,) = describe({CONFIG: b"[" * 100_000}).problems
    assert problem == f"{CONFIG}: not JSON (nested too deeply)"


def test_lone_surrogates_in_keys_are_shown_escaped() -> None:
    found = describe({OPS_INFO: b'{"B\\ud800": {}}', CONFIG: b'{"binList": [{"simplifiedKey": ["C\\udfff/x"]}]}'})
    assert found.op_types == ("B\\ud800", "C\\udfff")
    for op in found.op_types:
        op.encode("utf-8")


def test_wanted_names_what_describe_reads() -> None:
    assert layout.wanted("version.info") == layout.WHOLE
    assert layout.wanted(CONFIG) == layout.wanted(OPS_INFO) == layout.WHOLE
    assert layout.wanted("op_api/lib/libcust_opapi.so") == layout.ELF_HEAD
    assert layout.wanted(f"{TBE}/kernel/ascend910b/add/Add_0123.json") == 0  # kernel JSON: not read
    assert layout.wanted("op_api/include/aclnn_add.h") == 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["binList", "binInfo", "simplifiedKey", "jsonFilePath", "x"]), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@given(value=json_values)
def test_any_json_shape_gives_op_types_or_problems_never_an_exception(value: object) -> None:
    text = json.dumps(value).encode()
    found = describe({CONFIG: text, BINARY_INFO: text, OPS_INFO: text})
    assert all(isinstance(op, str) for op in found.op_types)
