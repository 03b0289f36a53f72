"""JUnit XML, the report format CI systems read as test results (GitHub, GitLab, Jenkins, Azure):
one ``<testcase>`` per finding, compared shape or drifted item; a failure's ``message`` is the fix.

Written with the standard library's ``xml.etree.ElementTree``, which escapes text and attributes:
no dependency for one flat document. The element and attribute names are the ones junitparser
and the JUnit XSD (github:windyroad/JUnit-Schema) read: testsuites > testsuite (name, tests,
failures, errors, skipped) > testcase (classname, name) > failure/skipped (message) and
system-out. XML 1.0 cannot carry most control characters even escaped (its ``Char``
production), so every value goes through ``shown_text`` first (``\\xNN``), as terminal output does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ascenv.model import Finding, Severity


@dataclass(frozen=True)
class Case:
    classname: str  # the group CI shows it under: ascenv.doctor.cann
    name: str
    failure: Optional[str] = None  # the failure message (the fix); None: passed
    skipped: Optional[str] = None  # why it was not judged
    text: str = ""  # the details (found, expected, source)


def document(suite: str, cases: Sequence[Case]) -> str:
    import xml.etree.ElementTree as ET

    from ascenv.output import shown_text

    def clean(value: str) -> str:
        return shown_text(value).replace("\t", " ")

    failures = sum(1 for c in cases if c.failure is not None)
    skipped = sum(1 for c in cases if c.failure is None and c.skipped is not None)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0", "skipped": str(skipped)}
    root = ET.Element("testsuites", {"name": clean(suite), **counts})
    element = ET.SubElement(root, "testsuite", {"name": clean(suite), **counts})
    for case in cases:
        node = ET.SubElement(element, "testcase", {"classname": clean(case.classname), "name": clean(case.name)})
        if case.failure is not None:
            ET.SubElement(node, "failure", {"message": clean(case.failure), "type": "failure"}).text = clean(case.text)
        elif case.skipped is not None:
            ET.SubElement(node, "skipped", {"message": clean(case.skipped)})
        if case.text and case.failure is None:
            ET.SubElement(node, "system-out").text = clean(case.text)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def finding_cases(command: str, findings: Sequence[Finding], *, strict: bool = False) -> list[Case]:
    """A finding as a test case: errors (and warnings under ``--strict``) fail, as they set the exit
    code; notes are skipped (nothing was judged); the rest pass with their words as output."""
    failing = {Severity.ERROR, Severity.WARN} if strict else {Severity.ERROR}
    cases = []
    for f in findings:
        details = [f"{f.severity.value}: {f.title}"]
        details += [f"{label}: {value}" for label, value in (("found", f.found), ("expected", f.expected))]
        details += [f"fix: {f.fix}" if f.fix else "", f"source: {f.source}" if f.source else ""]
        text = "\n".join(line for line in details if line and not line.endswith(": "))
        cases.append(
            Case(
                classname=f"ascenv.{command}.{f.layer}",
                name=f"{f.id}: {f.title}",
                failure=(f.fix or f.title) if f.severity in failing else None,
                skipped=f.title if f.severity is Severity.INFO else None,
                text=text,
            )
        )
    return cases
