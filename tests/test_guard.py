"""ascenv.guard: the import-time check a project ships. It must say what ``ascenv check`` says,
order versions as packaging and ascenv.versions do, read files only, and import nothing of ascenv."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ascenv import constraints, guard
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from tests.checks.helpers import shipped_matrix
from tests.fixture_hosts import build_host

REPO = Path(__file__).resolve().parents[1]

# --- PEP 440: the guard's small reader agrees with packaging ---------------------------------------

releases = st.lists(st.integers(0, 3), min_size=1, max_size=4).map(lambda n: ".".join(map(str, n)))
suffixes = st.sampled_from(["", "a1", "b2", "rc1", ".post1", ".dev0", "rc1.dev2", ".post2.dev1", "a0"])
versions = st.builds(lambda r, s, local: r + s + local, releases, suffixes, st.sampled_from(["", "+cpu", "+cu121"]))
specs = st.builds(
    lambda op, r, s: f"{op}{r}{s}",
    st.sampled_from(["==", "!=", ">=", "<=", ">", "<", "~="]),
    releases,
    st.sampled_from(["", "", "rc1", ".post1", ".dev0", ".*"]),
).filter(lambda s: _packaging_accepts(s))


def _packaging_accepts(spec: str) -> bool:
    try:
        SpecifierSet(spec)
    except Exception:
        return False
    return True


@settings(max_examples=600, deadline=None)
@given(versions, specs)
def test_pep440_clauses_agree_with_packaging(version, spec):
    expected = SpecifierSet(spec).contains(Version(version), prereleases=True)
    assert guard.contains("torch_npu", spec, version) is expected, (version, spec)


@settings(max_examples=300, deadline=None)
@given(versions, versions)
def test_pep440_order_agrees_with_packaging(a, b):
    public = (Version(a.split("+")[0]), Version(b.split("+")[0]))
    assert (guard.pep440_key(a) < guard.pep440_key(b)) is (public[0] < public[1])
    assert (guard.pep440_key(a) == guard.pep440_key(b)) is (public[0] == public[1])


@pytest.mark.parametrize(
    "spec, inside, outside",
    [
        (">=8.5.0", ["8.5.0", "8.5.1", "9.0.0-beta.1", "8.5.0.1"], ["8.3.RC1", "8.5.0.alpha001", "8.5.RC1"]),
        ("~=8.5.0", ["8.5.0", "8.5.2"], ["8.6.0", "9.0.0", "8.3.RC2"]),
        ("==8.3.*", ["8.3.RC1", "8.3.RC2.alpha001", "8.3.0"], ["8.5.0", "8.30.0"]),
        ("==8.3.X, !=8.3.RC1", ["8.3.RC2"], ["8.3.RC1"]),
        (">8.0.RC3, <8.1.RC1", ["8.0.RC3.20", "8.0.0"], ["8.0.RC3", "8.1.RC1", "8.0.T63"]),
    ],
)
def test_cann_clauses_order_as_huawei_means(spec, inside, outside):
    assert [v for v in inside if not guard.contains("cann", spec, v)] == []
    assert [v for v in outside if guard.contains("cann", spec, v)] == []


def test_a_bad_call_is_the_callers_bug_not_a_mismatch():
    with pytest.raises(TypeError, match="unknown layer 'cuda'"):
        guard.require(cuda=">=12")
    with pytest.raises(ValueError, match="is not <operator><version>"):
        guard.require(cann="8.5.0")


# --- the same words as ascenv check, on the fixture machines ---------------------------------------


@pytest.mark.parametrize(
    "host_name, ranges",
    [
        ("vllm-ascend-v0.12.0rc1", {"cann": ">=8.5.0", "torch_npu": "~=2.9"}),
        ("vllm-ascend-v0.11.0", {"torch": ">=2.8", "driver": ">=25.3.rc1"}),
        ("a2-cann800", {"firmware": "<7.7.0.1.231", "cann": "==8.5.*", "torch_npu": ">=2.1"}),
        ("container-no-devices", {"cann": ">=8.5.0", "driver": ">=25.0.0"}),  # CANN from the image's ENV
        ("two-canns-dangling-latest", {"cann": ">=8.1.RC1"}),  # latest dangles, nothing sourced: none
        ("nonroot-home", {"cann": "<8.0.0"}),  # /home/dev/Ascend, sourced
        ("a3-cann850", {"cann": "~=8.3.0"}),  # the 8.5 layout: cann-8.5.0, /usr/local/Ascend/cann
    ],
)
def test_the_guard_raises_the_words_of_the_check_finding(tmp_path, host_name, ranges):
    host = build_host(host_name, tmp_path)
    site = [p for p in host.environ.get("PYTHONPATH", "").split(":") if p.startswith(str(tmp_path))]
    file = tmp_path / "ascenv.toml"
    file.write_text("".join(f'{k} = "{v}"\n' for k, v in ranges.items()))
    declared = constraints.load(file, "ascenv.toml")
    snap = collect(Root(str(host.root)), dict(host.environ, PYTHONPATH=":".join(site)), python=sys.executable)
    failing = [f for f in constraints.judge(snap, declared, shipped_matrix()) if f.severity.value == "error"]
    assert len(failing) == len(ranges)
    expected = "; ".join(guard.text(f.title, next(iter(f.evidence), ""), f.fix) for f in failing)
    with pytest.raises(guard.StackMismatch) as raised:
        guard.require(who=declared.who, root=str(host.root), environ=host.environ, path=site, **ranges)
    assert sorted(str(raised.value).split("; ")) == sorted(expected.split("; "))


def test_a_stack_inside_the_ranges_passes(tmp_path):
    host = build_host("vllm-ascend-v0.12.0rc1", tmp_path)
    site = [p for p in host.environ["PYTHONPATH"].split(":") if p.startswith(str(tmp_path))]
    guard.require(
        root=str(host.root), environ=host.environ, path=site, cann="==8.3.*", torch_npu="~=2.8", driver=">=25.2.0"
    )


# --- standalone: the emitted module and ascenv.require --------------------------------------------


def run_python(code: str, cwd: Path, *flags: str) -> subprocess.CompletedProcess:
    environ = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
    }
    return subprocess.run(
        [sys.executable, *flags, "-c", code], cwd=cwd, env=environ, capture_output=True, text=True, timeout=60
    )


def emit(tmp_path: Path, text: str) -> Path:
    (tmp_path / "ascenv.toml").write_text(text)
    declared = constraints.load(tmp_path / "ascenv.toml", "ascenv.toml")
    module = tmp_path / "stack_guard.py"
    module.write_text(constraints.guard_module(declared))
    return module


def test_the_emitted_guard_fails_the_import_without_ascenv(tmp_path):
    emit(tmp_path, 'python = "<3.0"\nsocs = ["ascend910b"]\n')
    result = run_python("import stack_guard", tmp_path)
    assert result.returncode == 1
    here = ".".join(map(str, sys.version_info[:3]))
    line = f"{tmp_path.name} needs Python <3.0, found {here} ({sys.executable}): fix: run it with a Python <3.0"
    assert f"stack_guard.StackMismatch: {line}" in result.stderr


def test_the_emitted_guard_passes_silently_and_loads_nothing_of_ascenv(tmp_path):
    emit(tmp_path, 'python = ">=3.9"\n[soc.ascend910_93]\ncann = ">=9.0.0"\n')
    result = run_python(
        "import sys, stack_guard; print(sorted(m for m in sys.modules if m.split('.')[0] in ('ascenv', 'torch')))",
        tmp_path,
    )
    assert (result.returncode, result.stdout.strip(), result.stderr) == (0, "[]", "")


def test_ascenv_require_imports_only_the_guard(tmp_path):
    result = run_python(
        f"import sys; sys.path.insert(0, {str(REPO)!r}); import ascenv; ascenv.require(python='>=3')",
        tmp_path,
        "-X",
        "importtime",
    )
    assert result.returncode == 0, result.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert {m for m in imported if m.split(".")[0] == "ascenv"} == {"ascenv", "ascenv.guard"}
    assert "packaging" not in imported and "torch" not in imported


def test_ascenv_require_raises_the_mismatch(tmp_path):
    result = run_python(
        f"import sys; sys.path.insert(0, {str(REPO)!r}); import ascenv; ascenv.require(torch_npu='>=2.1', who='mypkg')",
        tmp_path,
    )
    assert "StackMismatch: mypkg needs torch_npu >=2.1, found none: fix: pip install 'torch_npu>=2.1'" in result.stderr


@pytest.mark.parametrize(
    "text", ["v1.0", "1.0-rc1", "1.0_post2", "1.0.DEV3", "1.0-1", "1.0a.1", "2.1.0.post17", "2.8.0+cpu", "1.0RC1-dev2"]
)
def test_the_spellings_pep_440_normalises_read_as_packaging_reads_them(text):
    public = Version(text.split("+")[0])
    for other in ("1.0", "1.0rc1", "1.0.post1", "2.1.0", "2.8.0"):
        assert (guard.pep440_key(text) < guard.pep440_key(other)) is (public < Version(other)), other
        assert (guard.pep440_key(text) == guard.pep440_key(other)) is (public == Version(other)), other


@pytest.mark.parametrize("text", ["1.0..1", "1.0-", "one", "1.0+", "1.0foo", "1.0.post1.a1", "²"])
def test_what_packaging_refuses_the_guard_refuses(text):
    with pytest.raises(ValueError):
        Version(text)
    with pytest.raises(ValueError):
        guard.pep440_key(text)
