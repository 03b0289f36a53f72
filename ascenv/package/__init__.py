"""Operator packages: makeself ``.run`` files read, checked and repacked in Python.

Nothing here executes a package. A makeself archive is a shell header followed by a compressed
tar stream; ``makeself`` reads the header's own variables (``skip``, ``filesizes``, checksums), so
can we (https://github.com/megastep/makeself, makeself-header.sh of release 2.4.5, the version the
CANN operator project template bundles).
"""
