"""The compatibility matrix: ``compat/*.toml`` loaded, validated and queried.

``load(directory)`` (``ascenv.compat.loader``) reads and validates the three shipped files into a
frozen ``Matrix`` (``ascenv.compat.queries``) of rows (``ascenv.compat.model``), each row with its
provenance; ``load_cached`` (``ascenv.compat.cache``) keeps it between runs. The queries are what
the doctor checks and the fix suggester need.
"""

from __future__ import annotations

from ascenv.compat.cache import load_cached
from ascenv.compat.loader import FILES, SCHEMA, TableReader, load, pattern, read_table
from ascenv.compat.model import (
    ALLOWED_DRIVER_FITS,
    CannRelease,
    CompatWindow,
    CompilerVersion,
    DriverFit,
    DriverVerdict,
    HdkKind,
    HdkRule,
    PciCard,
    PciDevice,
    PciMatch,
    Provenance,
    PypiListing,
    Soc,
    Status,
    TorchNpuFit,
    TorchNpuFitGrade,
    TorchNpuRelease,
    TorchPin,
    source_url,
)
from ascenv.compat.queries import Matrix, soc_version_for_npu_smi

__all__ = [
    "ALLOWED_DRIVER_FITS",
    "CannRelease",
    "CompatWindow",
    "CompilerVersion",
    "DriverFit",
    "DriverVerdict",
    "FILES",
    "HdkKind",
    "HdkRule",
    "Matrix",
    "PciCard",
    "PciDevice",
    "PciMatch",
    "Provenance",
    "PypiListing",
    "SCHEMA",
    "TableReader",
    "Soc",
    "Status",
    "TorchNpuFit",
    "TorchNpuFitGrade",
    "TorchNpuRelease",
    "TorchPin",
    "load",
    "load_cached",
    "pattern",
    "read_table",
    "soc_version_for_npu_smi",
    "source_url",
]
