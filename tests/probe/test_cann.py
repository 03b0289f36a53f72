from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascenv.probe.cann import NOT_SOURCED, probe_cann
from ascenv.probe.fs import Root
from tests.fixture_hosts import HOST_NAMES, build_host, corpus_text

TOOLKIT = "/usr/local/Ascend/ascend-toolkit"
_INFO_800 = "version_files/ascend_toolkit_install.info_8.0.0_aarch64_container_vllm-ascend-issue632.txt"


def probe(host):
    return probe_cann(Root(host.root), host.environ, host.home)


def write(root: Path, machine_path: str, text: str) -> None:
    path = root / machine_path.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def link(root: Path, machine_path: str, target: str) -> None:
    path = root / machine_path.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def test_a2_legacy_8_0_0(tmp_path):
    cann = probe(build_host("a2-cann800", tmp_path))
    (install,) = cann.installs
    assert install.path == f"{TOOLKIT}/8.0.0"
    assert install.kind == "toolkit"
    assert (install.version, install.innerversion, install.arch) == ("8.0.0", "V100R001C20SPC001B251", "aarch64")
    assert install.info_file == f"{TOOLKIT}/8.0.0/aarch64-linux/ascend_toolkit_install.info"
    assert install.info["compatible_version"] == "[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20]"
    assert install.version_cfg["runtime_running_version"] == "[7.6.0.1.220:8.0.0]"
    assert len(install.version_cfg) == 21
    assert install.compiler_version == "7.6.0.1.220"
    assert install.required_opp_abi_version is None
    assert install.kernels == ("ascend910b",)
    assert install.socs == ("Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend910B4-1")
    assert install.set_env == f"{TOOLKIT}/set_env.sh"
    assert install.links == (f"{TOOLKIT}/latest",)
    assert cann.active == f"{TOOLKIT}/8.0.0"
    assert cann.active_reason == "ASCEND_HOME_PATH"
    (latest,) = cann.links
    assert (latest.path, latest.target, latest.resolved, latest.dangling) == (
        f"{TOOLKIT}/latest",
        "8.0.0",
        f"{TOOLKIT}/8.0.0",
        False,
    )
    assert cann.errors == ()


def test_a3_cann_8_5_layout(tmp_path):
    cann = probe(build_host("a3-cann850", tmp_path))
    (install,) = cann.installs  # reached via cann, the env, and Install_Path: deduplicated
    assert install.path == "/usr/local/Ascend/cann-8.5.0"
    assert install.kind == "cann"
    assert install.version == "8.5.0"
    assert (
        install.info_file == "/usr/local/Ascend/cann-8.5.0/aarch64-linux/ascend_toolkit_install.info"
    )  # not ascend_ops_install.info
    assert install.kernels == ("ascend910_93",)
    assert install.socs == ("Ascend910_9382", "Ascend910_9392")
    assert install.set_env == "/usr/local/Ascend/cann-8.5.0/set_env.sh"
    assert install.links == ("/usr/local/Ascend/cann",)
    assert (cann.active, cann.active_reason) == ("/usr/local/Ascend/cann-8.5.0", "ASCEND_HOME_PATH")
    assert [(lk.path, lk.target, lk.dangling) for lk in cann.links] == [("/usr/local/Ascend/cann", "cann-8.5.0", False)]


def test_310p_duo(tmp_path):
    cann = probe(build_host("310p-duo", tmp_path))
    (install,) = cann.installs
    assert (install.path, install.version, install.innerversion) == (
        f"{TOOLKIT}/8.1.RC1",
        "8.1.RC1",
        "V100R001C21SPC001B238",
    )
    assert install.kernels == ("ascend310p",)
    assert cann.active == f"{TOOLKIT}/8.1.RC1"


def test_container_without_devices_still_has_its_toolkit(tmp_path):
    cann = probe(build_host("container-no-devices", tmp_path))
    assert [i.version for i in cann.installs] == ["8.0.0"]
    assert cann.active == f"{TOOLKIT}/8.0.0"


def test_two_canns_and_a_dangling_latest(tmp_path):
    cann = probe(build_host("two-canns-dangling-latest", tmp_path))
    assert [(i.path, i.version) for i in cann.installs] == [
        (f"{TOOLKIT}/8.1.RC1", "8.1.RC1"),
        (f"{TOOLKIT}/8.2.RC1", "8.2.RC1"),
    ]
    old, new = cann.installs
    assert old.kernels == () and new.kernels == ("ascend910b",)
    assert old.links == () and new.links == ()
    assert old.set_env is None  # ascend-toolkit/set_env.sh activates latest, which leads nowhere
    assert new.info["innerversion"] == "V100R001C22SPC001B231"
    (latest,) = cann.links
    assert (latest.path, latest.target, latest.resolved, latest.dangling) == (
        f"{TOOLKIT}/latest",
        "8.3.RC2",
        None,
        True,
    )
    assert (cann.active, cann.active_reason) == (None, NOT_SOURCED)


def test_nonroot_home_install(tmp_path):
    host = build_host("nonroot-home", tmp_path)
    cann = probe(host)
    (install,) = cann.installs
    assert install.path == "/home/dev/Ascend/ascend-toolkit/8.1.RC1"
    assert (install.version, install.arch) == ("8.1.RC1", "x86_64")
    assert install.info_file.endswith("/x86_64-linux/ascend_toolkit_install.info")
    assert install.set_env == "/home/dev/Ascend/ascend-toolkit/set_env.sh"
    assert cann.active == install.path
    # without the home and without the environment, nothing leads there
    assert probe_cann(Root(host.root), {}, None).installs == ()
    # found through the home alone, not active
    alone = probe_cann(Root(host.root), {}, "/home/dev")
    assert [i.path for i in alone.installs] == [install.path] and alone.active is None


@pytest.mark.parametrize("name", HOST_NAMES)
def test_every_fixture_host_has_its_installs(name, tmp_path):
    expected = {
        "a2-cann800": ["8.0.0"],
        "a3-cann850": ["8.5.0"],
        "310p-duo": ["8.1.RC1"],
        "container-no-devices": ["8.0.0"],
        "two-canns-dangling-latest": ["8.1.RC1", "8.2.RC1"],
        "nonroot-home": ["8.1.RC1"],
        "vllm-ascend-v0.12.0rc1": ["8.3.RC2"],
        "vllm-ascend-v0.11.0": ["8.3.RC2"],
    }
    assert [i.version for i in probe(build_host(name, tmp_path)).installs] == expected[name]


# --- layouts not among the fixture hosts ------------------------------------------------------------


def test_latest_as_a_directory_of_symlinks(tmp_path):
    # MindIE image: latest/ is a real directory whose entries link into ../8.2.RC2/ (version_files
    # mindie-2.0.T3.1-image_... section 2), and its own version.cfg names another version
    write(tmp_path, f"{TOOLKIT}/8.2.RC2/compiler/version.info", "Version=8.2.0.2.220\nversion_dir=8.2.RC2\n")
    write(tmp_path, f"{TOOLKIT}/8.2.RC2/opp/version.info", "Version=8.2.0.2.220\n")
    (tmp_path / "usr/local/Ascend/ascend-toolkit/8.2.RC2/runtime").mkdir()
    cfg = corpus_text("version_files/mindie-2.0.T3.1-image_version.cfg_driver_atb_mindie_version.info_notes.txt", 0)
    write(tmp_path, f"{TOOLKIT}/latest/version.cfg", cfg)
    for name, target in [
        ("compiler", "../8.2.RC2/compiler"),
        ("opp", "../8.2.RC2/opp"),
        ("runtime", "../8.2.RC2/runtime"),
        ("pyACL", "../8.2.RC2/pyACL"),
    ]:
        link(tmp_path, f"{TOOLKIT}/latest/{name}", target)
    cann = probe_cann(Root(tmp_path), {"ASCEND_HOME_PATH": f"{TOOLKIT}/latest"}, None)
    (install,) = cann.installs
    assert install.path == f"{TOOLKIT}/8.2.RC2"
    assert install.compiler_version == "8.2.0.2.220" and install.opp_version == "8.2.0.2.220"
    assert install.links == (f"{TOOLKIT}/latest",)
    # pyACL -> ../8.2.RC2/pyACL does not exist: reported as a dangling link
    assert [(lk.path, lk.dangling) for lk in cann.links] == [(f"{TOOLKIT}/latest/pyACL", True)]
    # the environment names latest, which leads into 8.2.RC2 (its own version.cfg says 8.0.T63)
    assert cann.active == f"{TOOLKIT}/8.2.RC2" and cann.active_reason == "ASCEND_HOME_PATH"


def test_nnae_and_7_0_rc1_arm64_linux(tmp_path):
    write(
        tmp_path,
        "/usr/local/Ascend/nnae/8.0.RC3/ascend_nnae_install.info",
        "package_name=Ascend-cann-nnae\nversion=8.0.RC3\narch=x86_64\n",
    )
    link(tmp_path, "/usr/local/Ascend/nnae/latest", "8.0.RC3")
    info = corpus_text("version_files/ascend_toolkit_install.info_7.0.RC1_aarch64_310B4-board_notes.txt")
    write(tmp_path, f"{TOOLKIT}/7.0.RC1/arm64-linux/ascend_toolkit_install.info", info)
    cann = probe_cann(Root(tmp_path), {"ASCEND_TOOLKIT_HOME": "/usr/local/Ascend/nnae/latest"}, None)
    by_kind = {i.kind: i for i in cann.installs}
    assert (
        by_kind["nnae"].version == "8.0.RC3"
        and by_kind["nnae"].info_file == "/usr/local/Ascend/nnae/8.0.RC3/ascend_nnae_install.info"
    )
    assert by_kind["toolkit"].version == "7.0.RC1" and by_kind["toolkit"].info_file.endswith(
        "/arm64-linux/ascend_toolkit_install.info"
    )
    assert (cann.active, cann.active_reason) == ("/usr/local/Ascend/nnae/8.0.RC3", "ASCEND_TOOLKIT_HOME")


def test_install_path_of_ascend_cann_install_info(tmp_path):
    write(tmp_path, "/etc/Ascend/ascend_cann_install.info", "Install_Path=/opt/Ascend\n")
    write(
        tmp_path, "/opt/Ascend/ascend-toolkit/8.0.0/aarch64-linux/ascend_toolkit_install.info", corpus_text(_INFO_800)
    )
    cann = probe_cann(Root(tmp_path), {}, None)
    assert [i.path for i in cann.installs] == ["/opt/Ascend/ascend-toolkit/8.0.0"]


def test_environment_pointing_at_a_custom_directory(tmp_path):
    write(tmp_path, "/data/cann/8.0.0/aarch64-linux/ascend_toolkit_install.info", corpus_text(_INFO_800))
    cann = probe_cann(Root(tmp_path), {"ASCEND_HOME_PATH": "/data/cann/8.0.0"}, None)
    assert [i.path for i in cann.installs] == ["/data/cann/8.0.0"]
    assert cann.installs[0].kind == "toolkit"
    assert cann.active == "/data/cann/8.0.0"


def test_environment_pointing_nowhere(tmp_path):
    cann = probe_cann(Root(tmp_path), {"ASCEND_HOME_PATH": "/usr/local/Ascend/ascend-toolkit/latest"}, None)
    assert cann.active is None
    assert (
        cann.active_reason
        == "ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest does not lead to a CANN installation"
    )


# --- odd trees never raise ------------------------------------------------------------------------------


def test_empty_root(tmp_path):
    cann = probe_cann(Root(tmp_path), {}, None)
    assert (cann.installs, cann.links, cann.active, cann.active_reason, cann.errors) == ((), (), None, NOT_SOURCED, ())


def test_symlink_loop_latest_to_latest(tmp_path):
    link(tmp_path, f"{TOOLKIT}/latest", "latest")
    link(tmp_path, "/usr/local/Ascend/cann", "/usr/local/Ascend/cann")
    cann = probe_cann(Root(tmp_path), {"ASCEND_HOME_PATH": f"{TOOLKIT}/latest"}, "/root")
    assert cann.installs == ()
    assert sorted((lk.path, lk.target, lk.dangling) for lk in cann.links) == [
        ("/usr/local/Ascend/ascend-toolkit/latest", "latest", True),
        ("/usr/local/Ascend/cann", "/usr/local/Ascend/cann", True),
    ]
    assert cann.active is None


def test_garbage_install_info_and_unreadable_files(tmp_path):
    write(tmp_path, f"{TOOLKIT}/8.0.0/aarch64-linux/ascend_toolkit_install.info", "\x00\x01 version\n=\n==x\nversion\n")
    (tmp_path / "usr/local/Ascend/ascend-toolkit/8.0.0/version.cfg").mkdir()  # a directory: unreadable
    write(tmp_path, f"{TOOLKIT}/8.0.0/compiler/version.info", "\xff\xfe garbage")
    write(tmp_path, "/etc/Ascend/ascend_cann_install.info", "Install_Path=relative\n")
    cann = probe_cann(Root(tmp_path), {"ASCEND_HOME_PATH": "relative/path"}, "/")
    (install,) = cann.installs
    assert (install.version, install.compiler_version, install.version_cfg) == (None, None, {})
    assert cann.active is None


def test_link_escaping_the_root_stays_inside(tmp_path):
    # an absolute link in an unpacked image is resolved inside the root, never on this host
    link(tmp_path, f"{TOOLKIT}/latest", "/usr/local/Ascend/ascend-toolkit/9.9.9")
    cann = probe_cann(Root(tmp_path), {}, None)
    assert cann.installs == () and cann.links[0].dangling


_PROBE_CANN = """
import json, sys
from ascenv import serde
from ascenv.probe.cann import probe_cann
from ascenv.probe.fs import Root
cann = probe_cann(Root(sys.argv[1]), {}, "/root")
print(json.dumps({"installs": len(cann.installs), "errors": serde.to_data(cann.errors)}))
"""


@pytest.mark.parametrize("locked", ["usr/local/Ascend/ascend-toolkit/8.0.0", "usr/local/Ascend/ascend-toolkit"])
def test_a_root_only_install_is_a_permission_error_not_no_cann(tmp_path, locked):
    import json

    from tests.probe.test_driver import without_read_override

    host = build_host("a2-cann800", tmp_path)
    os.chmod(host.root / locked, 0)
    try:
        done = without_read_override(_PROBE_CANN, str(host.root))
    finally:
        os.chmod(host.root / locked, 0o755)
    result = json.loads(done.stdout)
    assert result["installs"] == 0
    (error,) = result["errors"]
    assert error["kind"] == "permission" and error["source"] == "/" + locked
    assert "exists but cannot be read as uid" in error["message"] and str(tmp_path) not in error["message"]
