"""The error-signature table (compat/triage/signatures.toml): what a failure prints -> the layer it
implicates -> its known causes, ranked, with the doctor checks that decide each one.

Validated at load like the compatibility data: a bad value names the file and its key path and is
exit code 2. Patterns are linear-time by construction: literals are plain substrings, and a regex
may not nest quantifiers nor refer back to a group (checked here, so a signature can never make a
2 GB log take exponential time).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ascenv import errors
from ascenv.triage.families import FILE as LAYERS_FILE
from ascenv.triage.families import load_layers
from ascenv.triage.rules import CAUSES, FAMILIES, LAYERS, CauseRule, Signature, cause_rule

__all__ = ["CAUSES", "FAMILIES", "LAYERS", "CauseRule", "Signature", "SignatureTable", "cause_rule", "load"]

FILE = "signatures.toml"


@dataclass(frozen=True)
class SignatureTable:
    signatures: tuple[Signature, ...]
    layers: Any = None  # families.Layers: what libraries and symbol namespaces belong to

    @property
    def literals(self) -> tuple[str, ...]:
        """The scanner's prefilter: every literal once, without those that contain another (a line
        holding "Acl open device 0 failed" holds "Acl open device": one search finds both)."""
        unique = sorted({lit for sig in self.signatures for lit in sig.literals}, key=lambda s: (len(s), s))
        kept: list[str] = []
        for literal in unique:
            if not any(shorter in literal for shorter in kept):
                kept.append(literal)
        return tuple(kept)

    @functools.cached_property
    def _by_literal(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        index: dict[str, list[int]] = {}
        for position, sig in enumerate(self.signatures):
            for literal in sig.literals:
                index.setdefault(literal, []).append(position)
        return tuple((literal, tuple(positions)) for literal, positions in index.items())

    @functools.cached_property
    def _literal_set(self) -> Optional[Any]:
        """An RE2 set of the distinct literals (one pass over a line names every literal it holds),
        or None without google-re2."""
        from ascenv.triage.matcher import _re2

        re2 = _re2()
        if re2 is None or not self._by_literal:
            return None
        literal_set = re2.Set.SearchSet()
        for position, (literal, _) in enumerate(self._by_literal):
            if literal_set.Add(_re2_literal(literal)) != position:  # a set numbers its patterns 0, 1, ...
                return None
        literal_set.Compile()
        return literal_set

    def candidates(self, line: str) -> tuple[Signature, ...]:
        """The signatures one of whose literals ``line`` holds, in table order (their regex is
        still to be tested). One RE2 set match over the line names every literal it holds (one
        ``in`` per distinct literal, the fallback without google-re2, was 24 us a line: a log whose
        every line is an error with its own timestamp took 86x ripgrep, bench_triage.py --every)."""
        literal_set = self._literal_set
        if literal_set is not None:
            index = self._by_literal
            positions = {p for i in literal_set.Match(line) or () for p in index[i][1]}
        else:
            positions = {p for literal, where in self._by_literal if literal in line for p in where}
        return tuple(self.signatures[p] for p in sorted(positions))

    def by_code(self, code: str) -> tuple[Signature, ...]:
        wanted = code.upper()
        return tuple(s for s in self.signatures if wanted in (c.upper() for c in s.codes))

    def by_id(self, id: str) -> Optional[Signature]:
        return next((s for s in self.signatures if s.id == id), None)


def _re2_literal(literal: str) -> str:
    """``literal`` as an RE2 pattern (UTF-8 mode): ASCII letters and digits as they are, other ASCII
    as \\xNN, other characters as themselves (a literal character in RE2's UTF-8 syntax)."""
    return "".join(c if (c.isascii() and c.isalnum()) or not c.isascii() else f"\\x{ord(c):02x}" for c in literal)


def load(directory: Optional[Path] = None, known_checks: Optional[set[str]] = None) -> SignatureTable:
    """Read and validate ``signatures.toml`` (default: compat/triage/, shipped with the compat data;
    a subdirectory, so the compatibility loader's own file list stays as it is).
    ``known_checks``: the registered doctor check IDs every listed check must be one of."""
    # compat's reader: the same messages ("file: key.path: problem") and schema handling as the
    # compatibility data
    from ascenv import compat
    from ascenv.paths import data_dir

    directory = Path(directory) if directory is not None else data_dir("compat") / "triage"
    reader = compat.read_table(directory, FILE)
    ids: set[str] = set()

    def signature(row: Any) -> Signature:
        sig_id = row.string("id")
        if sig_id in ids:
            raise row.fail("id", f"{sig_id!r} used twice")
        ids.add(sig_id)
        layer = row.string("layer")
        if layer not in LAYERS:
            raise row.fail("layer", f"expected one of {', '.join(LAYERS)}, found {layer!r}")
        literals = row.strings("literals", required=True)
        source = row.strings("source", required=True)
        for i, url in enumerate(source):
            if not url.startswith("https://"):
                raise row.fail(f"source[{i}]", f"expected an https:// URL, found {url!r}")
        pattern = row.string("regex", required=False)
        compiled = None if pattern is None else _linear_regex(row, "regex", pattern)
        causes = row.rows("cause", lambda r: cause_rule(r, known_checks))
        family = row.string("family", required=False)
        if family is not None and family not in FAMILIES:
            raise row.fail("family", f"expected one of {', '.join(FAMILIES)}, found {family!r}")
        return Signature(
            id=sig_id,
            layer=layer,
            literals=literals,
            regex=compiled,
            codes=row.strings("codes"),
            summary=row.string("summary"),
            source=source,
            causes=causes,
            family=family,
            wrapper=bool(row.raw("wrapper", bool, False)),
            boost=_boost(row, family),
        )

    signatures = reader.rows("signature", signature)
    reader.done()
    layers = load_layers(directory, known_checks)
    family = next((s for s in signatures if s.family), None)
    if layers is None and family is not None:
        raise errors.DataFileError(
            f"{directory.name}/{LAYERS_FILE}: missing (signature {family.id!r} is of family {family.family!r})"
        )
    return SignatureTable(signatures, layers)


def _boost(row: Any, family: Optional[str]) -> bool:
    boost = bool(row.raw("boost", bool, False))
    if boost and family is not None:
        raise row.fail("boost", "a context signature cannot be of a family (it names no cause itself)")
    return boost


def _linear_regex(row: Any, key: str, pattern: str) -> re.Pattern:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise row.fail(key, f"not a valid regular expression: {exc}") from None
    problem = _backtracking_risk(pattern)
    if problem:
        raise row.fail(key, f"{problem}: use literals plus a simple regex (matching must stay linear-time)")
    return compiled


def _backtracking_risk(pattern: str) -> Optional[str]:
    """Why ``pattern`` could backtrack super-linearly (a repeat inside a repeat, a back-reference),
    or None. Walks the parsed pattern of the standard library's own parser."""
    import importlib

    try:
        parser: Any = importlib.import_module("re._parser")  # Python >= 3.11
    except ImportError:  # pragma: no cover - Python 3.9/3.10
        parser = importlib.import_module("sre_parse")
    constants = parser  # both modules re-export the opcode constants
    repeats = {constants.MAX_REPEAT, constants.MIN_REPEAT}
    possessive = getattr(constants, "POSSESSIVE_REPEAT", None)
    if possessive is not None:
        repeats.add(possessive)

    def walk(items: Any, inside_repeat: bool) -> Optional[str]:
        for op, arg in items:
            if op in repeats:
                low, high, sub = arg
                if inside_repeat:
                    return "nested quantifier"
                found = walk(sub, high > 1)
                if found:
                    return found
            elif op is constants.GROUPREF or op is getattr(constants, "GROUPREF_EXISTS", None):
                return "back-reference"
            elif op is constants.SUBPATTERN:
                found = walk(arg[-1], inside_repeat)
                if found:
                    return found
            elif op is constants.BRANCH:
                for branch in arg[1]:
                    found = walk(branch, inside_repeat)
                    if found:
                        return found
            elif op in (constants.ASSERT, constants.ASSERT_NOT):
                found = walk(arg[1], inside_repeat)
                if found:
                    return found
        return None

    return walk(parser.parse(pattern), False)
