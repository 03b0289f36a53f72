"""compat/triage/signatures.toml: the shipped table is valid, and a bad one names its key path."""

from __future__ import annotations

import re
import shutil

import pytest

from ascenv import errors, paths
from ascenv.checks import load_checks
from ascenv.triage.signatures import CAUSES, LAYERS, _backtracking_risk, load

SHIPPED = paths.data_dir("compat") / "triage" / "signatures.toml"

GOOD = """schema = 1

[[signature]]
id = "one"
layer = "npu"
literals = ["ret is -8020"]
summary = "s"
source = ["https://github.com/vllm-project/vllm-ascend/issues/632"]

[[signature.cause]]
cause = "device_busy"
weight = 0.9
checks = ["ASC-NPU-SMI"]
fix = "f"
"""


def write(tmp_path, text: str):
    (tmp_path / "signatures.toml").write_text(text)
    return tmp_path


def test_shipped_table_loads_with_every_check_registered():
    table = load(known_checks=set(load_checks()))
    assert len(table.signatures) >= 30
    for sig in table.signatures:
        assert sig.layer in LAYERS and sig.source and sig.causes
        assert all(url.startswith("https://") for url in sig.source)
        assert all(rule.cause in CAUSES for rule in sig.causes)
    # the codes the issue names each have an entry
    for code in ("EZ1001", "EZ3002", "EZ3003", "507008", "507899", "500001", "507033", "-8020", "-8005", "EL0004"):
        assert table.by_code(code), code


def test_shared_messages_list_several_causes():
    table = load()
    for code in ("500001", "EH9999", "507033", "-8005"):
        (sig,) = table.by_code(code)
        assert len(sig.causes) >= 2, code


def test_good_minimal_table(tmp_path):
    table = load(write(tmp_path, GOOD), known_checks={"ASC-NPU-SMI"})
    assert [s.id for s in table.signatures] == ["one"]


@pytest.mark.parametrize(
    "change, message",
    [
        (
            ('cause = "device_busy"', 'cause = "busy"'),
            "signature[0].cause[0].cause: expected one of driver_cann_mismatch",
        ),
        (('layer = "npu"', 'layer = "gpu"'), "signature[0].layer: expected one of npu"),
        (("weight = 0.9", "weight = 2"), "signature[0].cause[0].weight: expected a number from 0 to 1, found 2"),
        (("weight = 0.9", 'weight = "high"'), "signature[0].cause[0].weight: expected a number from 0 to 1"),
        (('checks = ["ASC-NPU-SMI"]', 'checks = ["ASC-NPU-SMY"]'), "signature[0].cause[0].checks[0]: no doctor check"),
        (('source = ["https://', 'source = ["http://'), "signature[0].source[0]: expected an https:// URL"),
        (('source = ["https://github.com/vllm-project/vllm-ascend/issues/632"]\n', ""), "signature[0].source: missing"),
        (('summary = "s"', 'summary = "s"\nregex = "(a+)+$"'), "signature[0].regex: nested quantifier"),
        (('summary = "s"', 'summary = "s"\nregex = "(a)\\\\1"'), "signature[0].regex: back-reference"),
        (('summary = "s"', 'summary = "s"\nregex = "(unclosed"'), "signature[0].regex: not a valid regular expression"),
        (
            ('summary = "s"', 'summary = "s"\nlitterals = ["x"]'),
            "signature[0].litterals: unknown key; perhaps you meant 'literals'",
        ),
        (('fix = "f"', 'fix = "f"\npackage = "numpy"'), "signature[0].cause[0].package_min: missing"),
        (("schema = 1", "schema = 2"), "schema: this ascenv reads schema 1"),
    ],
)
def test_bad_value_names_its_key_path(tmp_path, change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(errors.DataFileError) as caught:
        load(write(tmp_path, GOOD.replace(old, new, 1)), known_checks={"ASC-NPU-SMI"})
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"{tmp_path.name}/signatures.toml: ")
    assert caught.value.exit_code == errors.EXIT_USAGE


def test_duplicate_id(tmp_path):
    text = GOOD + GOOD.split("\n", 1)[1]
    with pytest.raises(errors.DataFileError, match=r"signature\[1\]\.id: 'one' used twice"):
        load(write(tmp_path, text))


def test_not_toml(tmp_path):
    with pytest.raises(errors.DataFileError, match="not valid TOML"):
        load(write(tmp_path, "[[signature]\n"))


def test_shipped_file_is_in_the_compat_data(tmp_path):
    # the compatibility loader reads only its own files and accepts this subdirectory beside them
    from ascenv import compat

    copy = tmp_path / "compat"
    shutil.copytree(paths.data_dir("compat"), copy)
    assert (copy / "triage" / "signatures.toml").is_file()
    compat.load(copy)


@pytest.mark.parametrize(
    "pattern, risky",
    [
        (r"error code is 500001", None),
        (r"(?:code is|ErrCode=)507033\b", None),
        (r"HCCL function error: \w+", None),
        (r"(a+)+", "nested quantifier"),
        (r"(?:x*y)*", "nested quantifier"),
        (r"(a|b+)*", "nested quantifier"),
        (r"(a)\1", "back-reference"),
    ],
)
def test_backtracking_risk(pattern, risky):
    re.compile(pattern)
    assert _backtracking_risk(pattern) == risky


def test_every_shipped_regex_is_linear():
    for sig in load().signatures:
        if sig.regex is not None:
            assert _backtracking_risk(sig.regex.pattern) is None, sig.id
