import os

from ascenv.cache.machine import MachineFacts
from ascenv.cache.survey import survey
from tests.cache.helpers import canary, write

OLD = 1_000_000.0


def test_roots_over_an_install_found_by_the_facts_are_dropped_after_the_scan(tmp_path):
    home = tmp_path / "home"
    write(str(home / "atc_data/kernel_cache/Ascend910B4/k.o"), b"k", mtime=OLD)
    write(str(tmp_path / "cann/kernel_cache/Ascend910B4/shipped.o"), b"k", mtime=OLD)
    calls = []

    def facts():
        calls.append(1)
        return MachineFacts(protected=(str(tmp_path / "cann"),))

    with canary(tmp_path):
        report = survey(
            {"ASCEND_CACHE_PATH": str(tmp_path / "cann")},
            home=str(home),
            cwd=str(home),
            search_paths=(),
            facts=facts,
            uid=None,
            recent_cutoff=float("inf"),
            one_file_system=True,
        )
    assert calls == [1]
    assert [os.path.basename(os.path.dirname(e.path)) for e in report.entries] == ["kernel_cache"]
    assert report.entries[0].path.startswith(str(home))
    assert any("CANN install" in w and str(tmp_path / "cann") in w for w in report.warnings)
