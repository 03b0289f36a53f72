import pytest

from ascenv.cache.entry import CacheEntry, CacheReport, CannRecord, VendorRecord
from ascenv.cache.plan import Filters, assess, compute_unit, make_plan, parse_age
from ascenv.errors import UsageError

DAY = 86400.0
T0 = 1_700_000_000.0  # CANN 8.0.RC1 installed
T1 = T0 + 30 * DAY  # CANN 8.1.RC1 installed beside it
T2 = T1 + 10 * DAY  # vendor "mine" (ascend910b) rebuilt and reinstalled
NOW = T2 + 5 * DAY
CANNS = (
    CannRecord("8.1.RC1", "/usr/local/Ascend/ascend-toolkit/8.1.RC1", T1),
    CannRecord("8.0.RC1", "/usr/local/Ascend/ascend-toolkit/8.0.RC1", T0),
)
VENDORS = (VendorRecord("mine", "/opp/vendors/mine", T2, ("ascend910b",)),)


def entry(name, kind="kernel-cache", soc=None, oldest=None, newest=None, **kw):
    return CacheEntry(
        kind, f"/c/{name}", "/c", "test", allocated=4096, files=1, soc=soc, oldest=oldest, newest=newest, **kw
    )


def judged(*entries, **kw):
    report = assess(CacheReport(entries=entries), canns=CANNS, vendors=VENDORS, **kw)
    return {e.path.rsplit("/", 1)[1]: e for e in report.entries}


def test_stale_with_two_cann_versions_and_a_rebuilt_vendor():
    e = judged(
        entry("before-any-cann", soc="Ascend310P3", oldest=T0 - DAY, newest=T0 - DAY),
        entry("by-8.0", soc="Ascend310P3", oldest=T0 + DAY, newest=T0 + 2 * DAY),
        entry("by-8.1-before-rebuild", soc="Ascend910B4", oldest=T1 + DAY, newest=T2 + DAY),
        entry("by-8.1-other-soc", soc="Ascend310P3", oldest=T1 + DAY, newest=T1 + DAY),
        entry("after-rebuild", soc="Ascend910B4", oldest=T2 + DAY, newest=T2 + DAY),
        entry("meta-before-rebuild", kind="kernel-meta", oldest=T1 + DAY, newest=T1 + DAY),
    )
    assert e["before-any-cann"].stale and e["before-any-cann"].cann_version is None
    assert "before any installed CANN" in e["before-any-cann"].stale_reasons[0]
    assert (e["by-8.0"].stale, e["by-8.0"].cann_version) == (False, "8.0.RC1")
    assert e["by-8.1-before-rebuild"].stale and e["by-8.1-before-rebuild"].cann_version == "8.1.RC1"
    assert "vendor mine was (re)installed" in e["by-8.1-before-rebuild"].stale_reasons[0]
    assert not e["by-8.1-other-soc"].stale  # mine has no ascend310p kernels
    assert not e["after-rebuild"].stale
    assert not e["meta-before-rebuild"].stale  # kernel_meta is never read back


def test_in_use_by_open_files_and_by_npu_processes():
    e = judged(
        entry("a", soc="Ascend910B4", oldest=NOW, newest=NOW),
        entry("m", kind="kernel-meta", oldest=NOW, newest=NOW),
        busy=[("/c/m/k.o", 42)],
        npu_pids=[7, 3],
    )
    assert e["m"].in_use == "open or used as working directory by pid 42"
    assert e["a"].in_use.startswith("NPU processes are running (pid 3, 7)")


def test_filters_and_skips():
    report = CacheReport(
        entries=(
            entry("old", soc="Ascend910B4", newest=NOW - 10 * DAY, stale=True),
            entry("new", soc="Ascend910_9382", newest=NOW - DAY),
            entry("log", kind="log", newest=NOW - 10 * DAY),
            entry("bank", kind="aoe-bank", newest=NOW - 10 * DAY, protected="AOE tuning banks are user results"),
            entry("busy", kind="kernel-meta", newest=NOW - 10 * DAY, in_use="pid 1"),
            entry("foreign", kind="kernel-meta", newest=NOW - 10 * DAY, kept_files=1, kept_bytes=4096),
        )
    )

    def names(filters):
        plan = make_plan(report, filters, NOW)
        return [e.path[3:] for e in plan.entries], sorted(s.entry.path[3:] for s in plan.skipped)

    assert names(Filters()) == (["old", "new"], ["busy", "foreign"])  # logs and banks not by default
    assert names(Filters(kinds=frozenset({"log", "aoe-bank"}))) == (["log"], ["bank"])
    assert names(Filters(older_than=7 * DAY)) == (["old"], ["busy", "foreign"])
    assert names(Filters(socs=frozenset({"ascend910_93"}))) == (["new"], [])
    assert names(Filters(socs=frozenset({"ascend910b4"}))) == (["old"], [])
    assert names(Filters(stale=True)) == (["old"], [])
    plan = make_plan(report, Filters(), NOW)
    assert (plan.bytes, plan.files) == (8192, 2)


def test_parse_age():
    assert parse_age("7d") == 7 * DAY and parse_age("30m") == 1800 and parse_age("2w") == 14 * DAY
    with pytest.raises(UsageError):
        parse_age("seven days")


def test_compute_unit_from_platform_config_names():
    # Short_SoC_version lower-cased (opproject-refdata/cann-8.1.RC1_platform_config_soc_table.csv)
    assert compute_unit("Ascend910B4") == "ascend910b"
    assert compute_unit("Ascend910B4-1") == "ascend910b"
    assert compute_unit("Ascend910_9382") == "ascend910_93"
    assert compute_unit("Ascend310P3") == "ascend310p"
    assert compute_unit("Ascend310B1") == "ascend310b"


def test_in_use_by_open_files_is_what_is_within_says_for_every_entry():
    from ascenv.cache.roots import is_within

    # neighbours that share a prefix ("/c/m-2", "/c/m0", "/c/m.o"), the root itself, deeper
    # files, a trailing slash, doubled slashes, the file system's root
    paths = ["/c/m", "/c/m/", "/c/m/k.o", "/c/m/d/e/f.o", "/c/m-2/x", "/c/m0", "/c/m.o", "/c//m/x", "/c", "/"]
    paths += ["/c/m/d", "/c/mm/x", "/d/m/x", "/c/m/d0/x"]
    busy = [(p, pid) for pid, p in enumerate(paths, start=100)] + [("/c/m/k.o", 7)]
    roots = ["/c/m", "/c/m/", "/c/m/d", "/c/m-2", "/c", "/", "/c//m", "/c/mm", "/d"]
    report = assess(CacheReport(entries=tuple(CacheEntry("kernel-meta", r, "/", "test") for r in roots)), busy=busy)
    for root, judged_entry in zip(roots, report.entries):
        pids = sorted({pid for path, pid in busy if is_within(path, root)})
        expected = "open or used as working directory by pid " + ", ".join(map(str, pids)) if pids else None
        assert judged_entry.in_use == expected, root
