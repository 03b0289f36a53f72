"""Rendering of `ascenv explain`, human and JSON."""

from __future__ import annotations

import textwrap

from ascenv.explain import Explanation
from ascenv.output import Output
from ascenv.output.triage import explain_code


def render(out: Output, result: Explanation, fmt: str = "human") -> None:
    if result.code:
        explain_code(out, result.code, result.signatures, fmt)
        return
    if fmt == "json":
        out.json(
            {
                "checks": [
                    {
                        "id": e.check.id,
                        "layer": e.check.layer,
                        "title": e.check.title,
                        "explain": e.check.explain,
                        "compat_data_as_of": e.compat_data_as_of,
                        "renamed_from": list(e.renamed_from),
                    }
                    for e in result.checks
                ],
                "compat_data_as_of": result.compat_data_as_of,
                "error_codes": list(result.error_codes),
            },
            kind="explain",
        )
        return
    for e in result.checks:
        c = e.check
        if result.listing:
            out.text(f"{c.id:<22} {c.layer:<10} {c.title}")
            continue
        dated = f"Compatibility data (compat/*.toml) as of {e.compat_data_as_of}.\n" if e.compat_data_as_of else ""
        note = f"{result.asked_as} was renamed {c.id}; the old ID still works here.\n\n" if result.asked_as else ""
        out.text(f"{note}{c.id}  ({c.layer}) {c.title}\n\n{c.explain}\n{dated}")
    if result.error_codes:
        out.text(f"\nError codes triage knows ({len(result.error_codes)}; `ascenv explain CODE` says what each means):")
        out.text(textwrap.fill(" ".join(result.error_codes), width=88, break_on_hyphens=False))
