"""The command line the generators of bin/ share: a shipped file regenerated from saved sources.

Maintenance code, not imported by ascenv. Without an option it says whether the shipped file is
what the sources regenerate (exit 0 either way); ``--check`` exits 1 when it is not (the test
suite and CI), ``--write`` rewrites it; a source it cannot read exits 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable


def main(
    argv: list[str] | None,
    *,
    description: str,
    generate: Callable[[], str],
    output: Path,
    origin: str,
    errors: type[Exception],
) -> int:
    root = output.parents[2]
    shipped = output.relative_to(root)
    name = Path(sys.argv[0]).stem
    parser = argparse.ArgumentParser(description=description)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"write {shipped}")
    mode.add_argument("--check", action="store_true", help="exit 1 when the shipped file differs")
    args = parser.parse_args(argv)
    try:
        text = generate()
    except errors as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    if args.write:
        output.write_text(text, encoding="utf-8")
        print(f"wrote {shipped}")
        return 0
    if output.exists() and output.read_text(encoding="utf-8") == text:
        print(f"{shipped} is what {origin} regenerates")
        return 0
    print(f"{shipped} differs from what {origin} regenerates (--write updates it)")
    return 1 if args.check else 0
