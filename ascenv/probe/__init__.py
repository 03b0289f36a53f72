"""The I/O edge: read a machine (or a root file system) into a ``Snapshot``.

``ascenv.probe.snapshot.collect`` runs every probe; each module here is one probe (a pure
parser beside a thin reader), importable on its own: clean-cache reads CANN, vendors and
npu-smi through three of them without paying for the rest at start-up.
"""
