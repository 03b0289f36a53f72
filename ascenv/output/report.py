"""Report rendering: ``report.md`` (paste-ready Markdown, the shape of pre-commit's error log:
headline, findings, versions, the commands that produced the data) and the command's summary."""

from __future__ import annotations

from typing import Optional

from ascenv import __version__
from ascenv.model import Snapshot
from ascenv.output import Output, doctor, safe, shown_text
from ascenv.redact import describe_redactions
from ascenv.report.bundle import Page
from ascenv.words import counted

# Packages maintainers ask for in Ascend issues (the vllm-ascend and ms-swift issue templates: torch,
# torch-npu, vllm, vllm_ascend, ms_swift), in this order, when present.
PACKAGES = (
    "torch",
    "torch-npu",
    "torchvision",
    "torchaudio",
    "numpy",
    "transformers",
    "vllm",
    "vllm-ascend",
    "triton-ascend",
    "mindspore",
    "mindie",
    "ms-swift",
    "deepspeed",
    "accelerate",
    "te",
    "hccl",
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def versions(snap: Snapshot) -> list[tuple[str, str, str]]:
    """(component, version, where it was read) rows, bottom of the stack first."""
    rows = []
    names = sorted({c.name for c in snap.npu.chips if c.name})
    if snap.npu.chips:
        rows.append(("NPU", f"{len(snap.npu.chips)}× {'/'.join(names)}", "npu-smi info"))
    if snap.npu.npu_smi_version:
        rows.append(("npu-smi", snap.npu.npu_smi_version, snap.npu.source))
    driver_file = snap.driver.version_file.path if snap.driver.version_file else ""
    rows.append(("driver", snap.driver.version or snap.npu.driver_version or "-", driver_file or snap.npu.source))
    rows.append(("firmware", snap.firmware.version or "-", snap.firmware.source))
    for install in snap.cann.installs:
        active = " (active)" if install.path == snap.cann.active else ""
        rows.append((f"CANN {install.kind}{active}", install.version or "?", install.path))
    for vendor in snap.vendors:
        detail = ", ".join(f"{k}={v}" for k, v in sorted(vendor.version_info.items())) or "-"
        rows.append((f"vendor {vendor.name} ({vendor.origin})", detail, vendor.path))
    py = snap.python
    rows.append(("Python", py.version or "-", py.executable or ""))
    packages = py.packages
    rows += [(name, packages[name], "") for name in PACKAGES if name in packages]
    host = snap.host
    os_name = " ".join(p for p in (host.os_id, host.os_version) if p) or "-"
    rows.append(
        ("OS", os_name, " ".join(p for p in (host.kernel, host.arch, f"glibc {host.glibc}" if host.glibc else "") if p))
    )
    return rows


def markdown(page: Page) -> str:
    """``report.md``: the page a maintainer reads first."""
    redactions = page.redactions
    lines = ["## ascenv report", "", f"Made {page.created} by ascenv {__version__}: `{page.commands[0]}`", ""]
    if not page.redacted:
        lines += [
            "**Not redacted** (`--no-redact`): host names, user names, IP addresses and serial numbers are as read.",
            "",
        ]
    elif redactions:
        example = f"<{next(iter(redactions))}-1>"
        lines += [
            f"**Redacted:** {describe_redactions(redactions)}. A placeholder such as `{example}` stands for",
            "the same value everywhere in this bundle; the values themselves are not in it.",
            "",
        ]
    else:
        lines += ["**Redacted:** nothing personal was found to hide.", ""]
    lines.append(doctor.markdown(page.snapshot, list(page.findings)).rstrip("\n"))
    if page.triage_markdown:
        lines += ["", page.triage_markdown.rstrip("\n")]
    lines += ["", "### Versions", "", "| component | version | read from |", "|---|---|---|"]
    lines += [f"| {_cell(a)} | {_cell(b)} | {_cell(c)} |" for a, b, c in versions(page.snapshot)]
    lines += bench_lines(page)
    lines += ["", "### Commands that produced this data", "", "```", *page.commands, "```", ""]
    lines += ["### Files in this bundle", ""]
    lines += [
        "- `report.md`: this page",
        "- `snapshot.json`: the whole stack (schema 1, as `ascenv snapshot -o` writes it)",
        "- `findings.json`: the doctor findings",
        f"- `ascenv.lock`: the stack as a lock ({page.lock_origin})",
    ]
    if page.triage_markdown:
        lines.append("- `triage.json`: the causes `ascenv triage` found in the log given with `--log`")
    if page.bench:
        lines.append(
            "- `bench.json`: the baseline and latest bench run of each installed vendor's operator, and the "
            "latest accuracy check of its build"
        )
    lines += [f"- `{member}`: {what}" for member, what in page.extra]
    lines += ["- `MANIFEST.json`: every member with its sha256", ""]
    # a file read later in a terminal (cat report.md) or pasted: a log's ESC ]0;...BEL or CR must
    # not drive the terminal, as on stdout (the same rule as Output.text)
    return shown_text("\n".join(lines))


def _us(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "-"


def _accuracy_lines(check: Optional[dict]) -> list[str]:
    """The installed build's newest `ascenv test` run, in one line."""
    if not check:
        return []
    verdict = f"failed on {', '.join(check['failed'])}" if check["failed"] else "passed"
    return [
        f"Accuracy check `{_cell(check['id'])}` ({_cell(check['target'])}, {check['shapes']} shapes, "
        f"{_cell(check['created'])}): {_cell(verdict)}.",
        "",
    ]


def bench_lines(page: Page) -> list[str]:
    """The baseline and latest median per shape of each installed vendor's operator."""
    if page.bench is None and page.bench_note is None:
        return []
    lines = ["", "### Bench runs of installed vendors", ""]
    if not page.bench:
        return lines + [f"None: {page.bench_note}."]
    for v in page.bench["vendors"]:
        key = (v["build"] or "?")[:12]
        where = "in the store" if v["build_in_store"] else "not in the store"
        lines += [f"Vendor `{v['vendor']}`: `{v['op']}`, installed build `{key}` ({where}).", ""]
        if v["problem"]:
            lines += [f"Its runs could not be read: {v['problem']}", ""]
            continue
        lines += _accuracy_lines(v.get("accuracy"))
        if not v["latest"] and not v["baselines"]:
            continue
        shown = [(f"baseline ({target})", run) for target, run in sorted(v["baselines"].items())]
        shown += [("latest", v["latest"])] if v["latest"] else []
        if not v["baselines"]:
            lines += ["No baseline set (`ascenv bench baseline set RUN`).", ""]
        lines += [
            "| run | id | tool | op | shape | task type | median µs | samples |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for label, run in shown:
            for r in run["records"]:
                cells = (label, run["run"], run["tool"], r["op"], r["input_shapes"] or "-", r["task_type"] or "-")
                lines.append(
                    "| " + " | ".join(_cell(str(c)) for c in cells) + f" | {_us(r['duration_us'])} | {r['samples']} |"
                )
        lines.append("")
    return lines[:-1]


def written(out: Output, path: str, result: dict, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(result, kind="report")
        return
    c = out.console
    summary = result["summary"]
    size = result["size"]
    c.print(
        f"[bold]ascenv report[/]  wrote {safe(path)} ({counted(len(result['members']), 'file')}, {size / 1024:.1f} KiB)"
    )
    c.print(
        f"  {counted(summary['error'], 'error')}, {counted(summary['warn'], 'warning')} found by doctor;"
        f" sha256 {result['sha256'][:16]}…"
    )
    if not result["redacted"]:
        c.print("  [yellow]not redacted[/] (--no-redact): host names, user names, IPs and serials are in it as read")
    elif result["redactions"]:
        c.print(f"  redacted: {safe(describe_redactions(result['redactions']))}")
    c.print("  Attach the file to the issue; paste its report.md into the issue text.")
