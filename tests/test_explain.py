"""`ascenv explain`: the listing names the error codes it knows, an unknown code is told apart
from an unknown check."""

from __future__ import annotations

import io
import json

import pytest

from ascenv import cli, errors
from ascenv.commands._common import Context
from ascenv.explain import explain
from ascenv.output import Output
from ascenv.triage.signatures import load as load_signatures


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(environ={}, out=Output(stdout=out, stderr=err, interactive=False, color=False))
    return cli.main(argv, ctx=ctx), out.getvalue(), err.getvalue()


def test_the_listing_names_every_error_code_of_the_signature_table():
    table = load_signatures()
    codes = {c.upper() for s in table.signatures for c in s.codes}
    assert explain(None).error_codes == tuple(sorted(codes)) and len(codes) >= 10
    code, out, _ = _run(["explain"])
    assert code == 0 and "Error codes triage knows" in out
    for known in codes:
        assert known in out
    code, out, _ = _run(["explain", "--format", "json"])
    assert sorted(json.loads(out)["error_codes"]) == sorted(codes)


@pytest.mark.parametrize(
    ("asked", "alike"), [("EZ9998", "EZ9903"), ("ez3001", "EZ3002"), ("561009", "561003"), ("EH1234", "EH9999")]
)
def test_an_unknown_error_code_is_called_a_code_with_the_known_ones_like_it(asked, alike):
    code, _, err = _run(["explain", asked])
    assert code == errors.EXIT_USAGE
    assert f"{asked} is not an error code triage's table knows" in err
    assert "no check named" not in err and alike in err


@pytest.mark.parametrize("asked", ["ASC-ENV-SOURCD", "asc-driver-lod"])
def test_an_unknown_check_is_still_a_check_with_a_suggestion(asked):
    code, _, err = _run(["explain", asked])
    assert code == errors.EXIT_USAGE and "no check named" in err and "perhaps you meant" in err


def test_a_known_code_still_explains():
    code, out, _ = _run(["explain", "EZ1001"])
    assert code == 0 and "EZ1001" in out and "fix:" in out
