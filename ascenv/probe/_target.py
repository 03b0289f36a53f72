"""Runs *inside* the target interpreter (``python3 -c <this source>``) and prints one JSON object.

It must run unchanged on CPython 3.7 to 3.13: no f-string ``=``, no walrus, no ``X | None``,
no ``importlib.metadata`` (absent on 3.7). It imports only the standard library and never
imports an installed distribution (importing torch can take seconds, print warnings, or crash on
a broken CANN): it reads ``*.dist-info`` / ``*.egg-info`` metadata files directly, the way
``importlib.metadata`` finds them (a directory named ``<name>-<version>.dist-info`` on sys.path).
"""

import hashlib
import json
import os
import platform
import sys
import sysconfig


def read_bytes(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def header_fields(text):
    """The RFC 822 header block of METADATA / PKG-INFO / WHEEL: name -> list of values."""
    fields = {}  # type: dict
    for line in text.splitlines():
        if not line.strip():
            break  # the body (long description) starts after the first blank line
        if line[:1] in (" ", "\t") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip().lower(), []).append(value.strip())
    return fields


def first(fields, key):
    values = fields.get(key)
    return values[0] if values else None


def name_version_from_dirname(entry):
    """``torch_npu-2.1.0.post3.dist-info`` -> (torch_npu, 2.1.0.post3); used when METADATA lacks them."""
    stem = entry.rsplit(".", 1)[0]
    name, _, version = stem.partition("-")
    version = version.split("-py")[0]  # egg-info: name-1.0-py3.8.egg-info
    return name, version or None


def distribution(location, entry, read=read_bytes, is_dir=os.path.isdir):
    """One distribution's record. ``read`` and ``is_dir`` reach the files: this interpreter's own,
    or (``ascenv.probe.root_python``) those of an image read under ``--root`` without running it."""

    def read_text(path):
        data = read(path)
        return None if data is None else data.decode("utf-8", "replace")

    path = os.path.join(location, entry)
    is_dist_info = entry.endswith(".dist-info")
    if is_dist_info:
        metadata = read_text(os.path.join(path, "METADATA"))
    elif is_dir(path):
        metadata = read_text(os.path.join(path, "PKG-INFO"))
    else:  # a single-file egg-info holds the PKG-INFO text itself
        metadata = read_text(path)
    if metadata is None:
        return None
    fields = header_fields(metadata)
    dir_name, dir_version = name_version_from_dirname(entry)
    record = {
        "name": first(fields, "name") or dir_name,
        "version": first(fields, "version") or dir_version or "",
        "location": location,
        "installer": None,
        "wheel_tags": [],
        "record_hash": None,
    }
    if is_dist_info:
        installer = read_text(os.path.join(path, "INSTALLER"))
        if installer is not None and installer.strip():
            record["installer"] = installer.strip()
        wheel = read_text(os.path.join(path, "WHEEL"))
        if wheel is not None:
            record["wheel_tags"] = header_fields(wheel).get("tag", [])
        data = read(os.path.join(path, "RECORD"))
        if data is not None:
            record["record_hash"] = hashlib.sha256(data).hexdigest()
    return record


def search_path():
    """sys.path without the probe's own working directory ('' for ``-c``) and without repeats."""
    seen = set()
    entries = []
    for entry in sys.path:
        if not entry:
            continue
        key = os.path.realpath(entry)
        if key in seen:  # the same directory twice on sys.path does not make two installs
            continue
        seen.add(key)
        entries.append(entry)
    return entries


def main():
    entries = search_path()
    distributions = []
    for location in entries:
        if not os.path.isdir(location):
            continue  # zip files and missing entries hold no installed distributions
        try:
            names = sorted(os.listdir(location))
        except OSError:
            continue
        for entry in names:
            if entry.endswith((".dist-info", ".egg-info")):
                record = distribution(location, entry)
                if record is not None:
                    distributions.append(record)
    result = {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": sysconfig.get_platform(),
        "sys_path": entries,
        "distributions": distributions,
    }
    sys.stdout.write(json.dumps(result, sort_keys=True))
    sys.stdout.write("\n")


if __name__ == "__main__":  # ``python3 -c`` runs it as __main__; importing it does nothing
    main()
