"""The exposition format of `ascenv export prometheus`: escaping, HELP/TYPE, promtool's verdict."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv.metrics import STACK_LABELS, StackMetrics, VendorMetric
from ascenv.output.export import exposition, label_value
from tests.engine_fixtures import unavailable


def metrics(**changes) -> StackMetrics:
    base = dict(
        stack=tuple((label, f"v-{label}") for label in STACK_LABELS),
        findings=(("error", 1), ("warn", 0), ("info", 2), ("ok", 7)),
        locks=(("cluster.lock", True), ("old.lock", False)),
        vendors=(VendorMetric("customize", "/opp/vendors/customize", "AddCustom,MatMulCustom", "ab" * 32),),
        timestamp=1764633600.5,
    )
    base.update(changes)
    return StackMetrics(**base)


# the text format's label value: \\, \" and \n are its only escapes; the value is UTF-8
# (https://prometheus.io/docs/instrumenting/exposition_formats/#comments-help-text-and-type-information)
_VALUE = re.compile(r'(?:[^"\\\n]|\\[\\"n])*')


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), text)


@pytest.mark.parametrize(
    ("raw", "written"),
    [
        ('say "hi"', 'say \\"hi\\"'),
        ("C:\\vendors\\x", "C:\\\\vendors\\\\x"),
        ("two\nlines", "two\\nlines"),
        ('\\"\n', '\\\\\\"\\n'),  # a backslash before a quote: both escaped, in order
        ("\udcff", "\\\\xff"),  # not UTF-8 (surrogateescape): shown, then its backslash escaped
    ],
)
def test_label_values_are_escaped(raw, written):
    assert label_value(raw) == written


@given(st.text())
def test_any_label_value_reads_back(text):
    written = label_value(text)
    assert _VALUE.fullmatch(written), written
    if not any("\ud800" <= c <= "\udfff" for c in text):
        assert unescape(written) == text


def test_every_family_has_help_and_type_before_its_samples():
    text = exposition(metrics())
    seen: list[str] = []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            seen.append(line.split()[2])
        elif line.startswith("# TYPE "):
            assert line.split()[2:] == [seen[-1], "gauge"]
        else:
            assert line.split("{")[0].split(" ")[0] == seen[-1], line
    assert seen == [
        "ascenv_stack_info",
        "ascenv_findings",
        "ascenv_lock_in_sync",
        "ascenv_last_run_timestamp_seconds",
        "ascenv_vendor_info",
    ]
    assert 'ascenv_lock_in_sync{lock="cluster.lock"} 1' in text
    assert 'ascenv_lock_in_sync{lock="old.lock"} 0' in text
    assert 'ascenv_findings{severity="ok"} 7' in text
    assert "ascenv_last_run_timestamp_seconds 1764633600.5" in text
    assert text.endswith("\n")


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        unavailable("promtool is not installed (Debian: prometheus)")
    return str(found)


@pytest.mark.parametrize(
    "case",
    [
        metrics(),
        metrics(locks=(), vendors=()),  # families without samples: HELP and TYPE alone
        metrics(
            stack=tuple((label, 'a"b\\c\nd') for label in STACK_LABELS),
            locks=(('we"ird\n.lock', False),),
            vendors=(VendorMetric("v\\x", "/a\nb", "", ""),),
        ),
    ],
    ids=["full", "empty-families", "hostile-labels"],
)
def test_promtool_check_metrics_accepts_it(case, tmp_path):
    # promtool reads the exposition on stdin; it exits 0 when it parses (lint warnings go to stdout)
    done = subprocess.run(
        [promtool(), "check", "metrics"],
        input=exposition(case).encode(),
        capture_output=True,
        timeout=60,
        env={"PATH": os.environ.get("PATH", "")},
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
