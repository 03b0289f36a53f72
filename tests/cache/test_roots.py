import os

from ascenv.cache.roots import ascenv_cache_dir, ascenv_state_dir, resolve_roots

HOME = "/home/u"
CWD = "/home/u/proj"


def by_kind(roots, kind):
    return [(r.path, r.source, r.active) for r in roots if r.kind == kind]


def test_defaults_without_any_variable():
    roots = resolve_roots({}, home=HOME, cwd=CWD)
    assert by_kind(roots, "kernel-cache") == [("/home/u/atc_data/kernel_cache", "default $HOME/atc_data", True)]
    assert by_kind(roots, "fuzzy-kernel-cache") == [
        ("/home/u/atc_data/fuzzy_kernel_cache", "default $HOME/atc_data", True)
    ]
    assert by_kind(roots, "kernel-meta") == [("/home/u/proj/kernel_meta", "working directory", True)]
    assert by_kind(roots, "log") == [("/home/u/ascend/log", "default $HOME/ascend/log", True)]
    assert by_kind(roots, "aoe-bank") == [
        ("/home/u/Ascend/latest/data/aoe/custom", "default $HOME/Ascend/latest/data/aoe/custom", True)
    ]
    assert all(r.refused is None for r in roots)


def test_compile_cache_precedence_acl_over_cache_path_over_default():
    env = {"ACL_OP_COMPILER_CACHE_DIR": "/data/acl", "ASCEND_CACHE_PATH": "/data/cache"}
    assert by_kind(resolve_roots(env, home=HOME, cwd=CWD), "kernel-cache") == [
        ("/data/acl/kernel_cache", "ACL_OP_COMPILER_CACHE_DIR", True),
        ("/data/cache/kernel_cache", "ASCEND_CACHE_PATH", False),
        ("/home/u/atc_data/kernel_cache", "default $HOME/atc_data", False),
    ]
    env = {"ASCEND_CACHE_PATH": "rel/cache"}  # relative values are taken from the working directory
    assert by_kind(resolve_roots(env, home=HOME, cwd=CWD), "kernel-cache")[0] == (
        "/home/u/proj/rel/cache/kernel_cache",
        "ASCEND_CACHE_PATH",
        True,
    )


def test_work_path_moves_kernel_meta_logs_and_debris():
    env = {"ASCEND_WORK_PATH": "/w", "ASCEND_PROCESS_LOG_PATH": "/logs"}
    roots = resolve_roots(env, home=HOME, cwd=CWD)
    assert by_kind(roots, "kernel-meta") == [
        ("/w/kernel_meta", "ASCEND_WORK_PATH", True),
        ("/home/u/proj/kernel_meta", "working directory", False),
    ]
    assert by_kind(roots, "log") == [
        ("/logs", "ASCEND_PROCESS_LOG_PATH", True),
        ("/w/log", "ASCEND_WORK_PATH", False),
        ("/home/u/ascend/log", "default $HOME/ascend/log", False),
    ]
    assert ("/w/profiling_data", "ASCEND_WORK_PATH", True) in by_kind(roots, "profiling")
    assert ("/w/FE", "ASCEND_WORK_PATH", True) in by_kind(roots, "fusion-result")
    graph_dumps = [r for r in roots if r.kind == "dump" and r.path == "/w"]
    assert graph_dumps[0].pattern == r"\d+_\d+"


def test_tune_bank_is_listed_protected_kind():
    roots = resolve_roots({"TUNE_BANK_PATH": "/banks", "ASCEND_CACHE_PATH": "/c"}, home=HOME, cwd=CWD)
    assert by_kind(roots, "aoe-bank")[:2] == [
        ("/banks", "TUNE_BANK_PATH", True),
        ("/c/aoe_data", "ASCEND_CACHE_PATH", False),
    ]


def test_variables_pointing_at_home_system_or_installs_are_refused():
    env = {
        "ASCEND_PROCESS_LOG_PATH": HOME,
        "NPU_COLLECT_PATH": "/usr",
        "ASCEND_DUMP_PATH": "/data/Ascend/ascend-toolkit/8.1.RC1/x",
        "ASCEND_HOME_PATH": "/data/Ascend/ascend-toolkit/8.1.RC1",
    }
    roots = {(r.kind, r.path): r for r in resolve_roots(env, home=HOME, cwd=CWD)}
    assert "home" in roots[("log", HOME)].refused
    assert "system" in roots[("dump", "/usr")].refused
    assert "CANN install" in roots[("dump", "/data/Ascend/ascend-toolkit/8.1.RC1/x")].refused
    assert roots[("log", "/home/u/ascend/log")].refused is None


def test_work_path_equal_to_cache_path_protects_the_bank():
    roots = resolve_roots({"ASCEND_WORK_PATH": "/x", "ASCEND_CACHE_PATH": "/x"}, home=HOME, cwd=CWD)
    work = [r for r in roots if r.kind == "aoe-workspace" and r.path == "/x/aoe_data"][0]
    assert "AOE tuning bank" in work.refused


def test_vendor_paths_and_custom_opp_path_are_protected():
    env = {"ASCEND_CUSTOM_OPP_PATH": "/data/ops/vendors/mine:", "ASCEND_WORK_PATH": "/data/ops"}
    roots = resolve_roots(env, home=HOME, cwd=CWD, protected_paths=["/srv/vendors/other"])
    assert [r for r in roots if r.path == "/data/ops/log"][0].refused is None  # beside the vendor, not over it
    assert "/data/ops/vendors/mine" in [r for r in roots if r.kind == "dump" and r.path == "/data/ops"][0].refused
    roots = resolve_roots(
        {"ASCEND_CACHE_PATH": "/srv/vendors/other/c"}, home=HOME, cwd=CWD, protected_paths=["/srv/vendors/other"]
    )
    assert [r for r in roots if r.kind == "kernel-cache"][0].refused


def test_self_roots_keep_their_last_component_unresolved():
    links = {"/home/u/proj": "/data/proj", "/home/u/atc_data/kernel_cache": "/big/kernel_cache"}
    roots = resolve_roots({}, home=HOME, cwd=CWD, realpath=lambda p: links.get(p, p))
    assert by_kind(roots, "kernel-meta")[0][0] == "/data/proj/kernel_meta"
    assert by_kind(roots, "kernel-cache")[0][0] == "/big/kernel_cache"
    meta = next(r for r in roots if r.kind == "kernel-meta")
    assert meta.named == "/home/u/proj/kernel_meta" and "--follow /data/proj/kernel_meta" in meta.refused


def test_ascenv_dirs():
    assert ascenv_cache_dir({}, home=HOME, cwd=CWD) == "/home/u/.cache/ascenv"
    assert ascenv_cache_dir({"XDG_CACHE_HOME": "/xdg"}, home=HOME, cwd=CWD) == "/xdg/ascenv"
    assert ascenv_cache_dir({"ASCENV_CACHE_DIR": "/a", "XDG_CACHE_HOME": "/xdg"}, home=HOME, cwd=CWD) == "/a"
    assert ascenv_state_dir({}, home=HOME, cwd=CWD) == "/home/u/.local/state/ascenv"
    assert ascenv_state_dir({"XDG_STATE_HOME": "/s"}, home=HOME, cwd=CWD) == "/s/ascenv"


def refused(roots, kind, path):
    return next(r for r in roots if r.kind == kind and r.path == path).refused


def test_every_root_inside_a_system_tree_is_refused_at_any_depth():
    for tree in ("/usr", "/etc", "/var", "/opt", "/boot", "/lib", "/lib64", "/srv", "/run"):
        for value in (tree, f"{tree}/lib", f"{tree}/a/b/c"):
            env = {"ASCEND_PROCESS_LOG_PATH": value, "ASCEND_WORK_PATH": value, "ASCEND_CACHE_PATH": value}
            roots = resolve_roots(env, home=HOME, cwd=CWD)
            assert "system tree" in refused(roots, "log", value)
            assert "system tree" in refused(roots, "dump", value)  # the <pid>_<dev> pattern root too
            assert "system tree" in refused(roots, "kernel-cache", f"{value}/kernel_cache")
            assert "system tree" in refused(roots, "kernel-meta", f"{value}/kernel_meta")


def test_a_home_inside_a_system_tree_keeps_its_own_caches():
    home = "/var/lib/jenkins"
    roots = resolve_roots({"ASCEND_PROCESS_LOG_PATH": "/var/lib/other"}, home=home, cwd=home)
    assert refused(roots, "kernel-cache", "/var/lib/jenkins/atc_data/kernel_cache") is None
    assert "system tree" in refused(roots, "log", "/var/lib/other")
    assert refused(roots, "log", "/var/lib/jenkins/ascend/log") is None


def test_homes_and_directories_holding_homes_are_refused():
    for value in ("/", "/home", "/tmp", "/mnt", HOME, "/home/u/.."):
        roots = resolve_roots({"ASCEND_PROCESS_LOG_PATH": value}, home=HOME, cwd=CWD)
        path = os.path.normpath(value)
        assert "home" in refused(roots, "log", path), value
    roots = resolve_roots({"ASCEND_CACHE_PATH": "/home/alice/c"}, home=HOME, cwd=CWD, other_homes=["/home/alice", "/"])
    assert "another user's home" in refused(roots, "kernel-cache", "/home/alice/c/kernel_cache")


def test_a_symlinked_root_names_its_target_and_needs_follow():
    links = {"/home/u/atc_data/kernel_cache": "/big/kc", "/home/u/atc_data/fuzzy_kernel_cache": "/big/fkc"}
    roots = resolve_roots({}, home=HOME, cwd=CWD, realpath=lambda p: links.get(p, p))
    root = next(r for r in roots if r.kind == "kernel-cache")
    assert (root.path, root.named) == ("/big/kc", "/home/u/atc_data/kernel_cache")
    assert "--follow /big/kc" in root.refused
    roots = resolve_roots({}, home=HOME, cwd=CWD, realpath=lambda p: links.get(p, p), follow=["/big"])
    assert [r.refused for r in roots if r.path in ("/big/kc", "/big/fkc")] == [None, None]
