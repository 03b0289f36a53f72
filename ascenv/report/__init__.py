"""Bug-report bundles: ``bundle`` assembles the members (redacted with ``ascenv.redact``),
``archive`` writes them as a deterministic ``.tar.gz`` and reads one back, bounded and verified."""

from ascenv.redact import Known
from ascenv.report.archive import GZIP_MAGIC, load_bundle, pack, read_bundle
from ascenv.report.bundle import (
    DEFAULT_OUTPUT,
    MANIFEST,
    SNAPSHOT,
    BenchRuns,
    Bundle,
    Capture,
    Inputs,
    LogTriage,
    Page,
    RawFile,
    assemble,
)

__all__ = [
    "DEFAULT_OUTPUT",
    "GZIP_MAGIC",
    "MANIFEST",
    "SNAPSHOT",
    "BenchRuns",
    "Bundle",
    "Capture",
    "Inputs",
    "Known",
    "LogTriage",
    "Page",
    "RawFile",
    "assemble",
    "load_bundle",
    "pack",
    "read_bundle",
]
