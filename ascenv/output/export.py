"""`ascenv export prometheus`: the text exposition format, as node-exporter's textfile collector
reads it (https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format)."""

from __future__ import annotations

from collections.abc import Sequence

from ascenv.fsutil import shown
from ascenv.metrics import StackMetrics
from ascenv.output import Output, safe

_HELP = {
    "ascenv_stack_info": "This machine's Ascend stack as labels: driver, firmware, CANN, torch_npu, torch, NNAL, SoC.",
    "ascenv_findings": "ascenv doctor findings on this machine, by severity.",
    "ascenv_lock_in_sync": "1 when this machine matches the lock (ascenv lock --check), 0 when it drifted.",
    "ascenv_last_run_timestamp_seconds": "When ascenv export last wrote these metrics, in seconds since the epoch.",
    "ascenv_vendor_info": "A custom operator vendor on this machine, its OpTypes and build manifest digest.",
}


def label_value(value: str) -> str:
    """A label value as the format writes it: backslash, double quote and line feed escaped as
    ``\\\\``, ``\\"`` and ``\\n``; text that is not UTF-8 (a directory name) as ``fsutil.shown``."""
    return shown(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: Sequence[tuple[str, str]], value: object) -> str:
    inner = ",".join(f'{key}="{label_value(text)}"' for key, text in labels)
    return f"{name}{{{inner}}} {value}" if labels else f"{name} {value}"


def exposition(metrics: StackMetrics) -> str:
    """The metrics as one exposition-format document: HELP and TYPE before each family's samples."""
    families: dict[str, list[str]] = {
        "ascenv_stack_info": [_sample("ascenv_stack_info", metrics.stack, 1)],
        "ascenv_findings": [_sample("ascenv_findings", [("severity", s)], n) for s, n in metrics.findings],
        "ascenv_lock_in_sync": [
            _sample("ascenv_lock_in_sync", [("lock", lock)], int(ok)) for lock, ok in metrics.locks
        ],
        "ascenv_last_run_timestamp_seconds": [
            _sample("ascenv_last_run_timestamp_seconds", (), repr(metrics.timestamp))
        ],
        "ascenv_vendor_info": [
            _sample(
                "ascenv_vendor_info",
                [("vendor", v.vendor), ("path", v.path), ("op_types", v.op_types), ("build_sha256", v.build_sha256)],
                1,
            )
            for v in metrics.vendors
        ],
    }
    lines = []
    for name, samples in families.items():
        lines += [f"# HELP {name} {_HELP[name]}", f"# TYPE {name} gauge", *samples]
    return "\n".join(lines) + "\n"


def render_written(out: Output, path: str, metrics: StackMetrics) -> None:
    """What was written to ``-o FILE``."""
    drifted = [lock for lock, ok in metrics.locks if not ok]
    counts = ", ".join(f"{n} {s}" for s, n in metrics.findings)
    text = f"wrote {path}: findings {counts}" + (f"; drifted from {', '.join(drifted)}" if drifted else "")
    out.console.print(safe(text))
