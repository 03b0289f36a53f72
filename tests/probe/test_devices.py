from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascenv.probe.devices import cgroup_engine_line, detect_container, npu_functions, overlay_root, probe_devices
from ascenv.probe.fs import Root

# --- recorded texts ------------------------------------------------------------------------------
# /proc/<pid>/cgroup and /proc/self/mountinfo dumps from pre-commit's tests
# (github:pre-commit/pre-commit tests/languages/docker_test.py; the cgroup texts are at commit
# 039db10d86aa3fcbede9a43535bbf2cd2eabdeb4, the mountinfo texts from a later version of the same
# file, commit not recorded). pre-commit replaced every container id by one made-up id
# (c33988ec...); the mountinfo texts are cut to their first lines here, nothing else changed.

DOCKER_CGROUP_V1 = """\
12:hugetlb:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
11:blkio:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
10:freezer:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
9:cpu,cpuacct:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
8:pids:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
7:rdma:/
6:net_cls,net_prio:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
5:cpuset:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
4:devices:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
3:memory:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
2:perf_event:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
1:name=systemd:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7
0::/system.slice/containerd.service
"""

HOST_CGROUP_V1 = """\
12:perf_event:/
11:hugetlb:/
10:devices:/
9:blkio:/
8:rdma:/
7:cpuset:/
6:cpu,cpuacct:/
5:freezer:/
4:memory:/
3:pids:/
2:net_cls,net_prio:/
1:name=systemd:/init.scope
0::/init.scope
"""

DOCKER_CGROUP_V2_MOUNTINFO = """\
721 386 0:45 / / rw,relatime master:218 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/QHZ7OM7P4AQD3XLG274ZPWAJCV:/var/lib/docker/overlay2/l/5RFG6SZWVGOG2NKEYXJDQCQYX5,upperdir=/var/lib/docker/overlay2/e4ad859fc5d4791932b9b976052f01fb0063e01de3cef916e40ae2121f6a166e/diff,workdir=/var/lib/docker/overlay2/e4ad859fc5d4791932b9b976052f01fb0063e01de3cef916e40ae2121f6a166e/work,nouserxattr
722 721 0:48 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
723 721 0:50 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755,inode64
724 723 0:51 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw,gid=5,mode=620,ptmxmode=666
725 721 0:52 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro
726 725 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate,memory_recursiveprot
"""  # noqa: E501

# Podman, cgroup v2: the root mount is not the first line.
PODMAN_CGROUP_V2_MOUNTINFO = """\
685 690 0:63 /containers/overlay-containers/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7/userdata/resolv.conf /etc/resolv.conf rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=1637624k,nr_inodes=409406,mode=700,uid=1000,gid=1000,inode64
686 690 0:63 /containers/overlay-containers/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7/userdata/hosts /etc/hosts rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=1637624k,nr_inodes=409406,mode=700,uid=1000,gid=1000,inode64
687 692 0:50 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=64000k,uid=1000,gid=1000,inode64
688 690 0:63 /containers/overlay-containers/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7/userdata/.containerenv /run/.containerenv rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=1637624k,nr_inodes=409406,mode=700,uid=1000,gid=1000,inode64
689 690 0:63 /containers/overlay-containers/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7/userdata/hostname /etc/hostname rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=1637624k,nr_inodes=409406,mode=700,uid=1000,gid=1000,inode64
690 546 0:55 / / rw,relatime - overlay overlay rw,lowerdir=/home/asottile/.local/share/containers/storage/overlay/l/NPOHYOD3PI3YW6TQSGBOVOUSK6,upperdir=/home/asottile/.local/share/containers/storage/overlay/565c206fb79f876ffd5f069b8bd7a97fb5e47d5d07396b0c395a4ed6725d4a8e/diff,workdir=/home/asottile/.local/share/containers/storage/overlay/565c206fb79f876ffd5f069b8bd7a97fb5e47d5d07396b0c395a4ed6725d4a8e/work,redirect_dir=nofollow,uuid=on,volatile,userxattr
691 690 0:59 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
"""  # noqa: E501

# proc(5) (man-pages, "/proc/pid/mountinfo") documents the line format with this example: a bind
# mount with one optional field; a host's root line has the same shape with an ext4/xfs type.
PROC5_EXAMPLE = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"

# Kubernetes pod cgroups, cgroup v1 and v2-style systemd slices (as in elastic/apm-agent-python
# tests/utils/cgroup_tests.py@8ab568ef8cbbbea83817c94dbe16bf04a121408e).
K8S_CGROUP_V1 = (
    "1:name=systemd:/kubepods/besteffort/pode9b90526-f47d-11e8-b2a5-080027b9f4fb/15aa6e53-b09a-40c7-8558-c6c31e36c88a\n"
)
K8S_CGROUP_SLICE = (
    "1:name=systemd:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod90d81341_92de_11e7_8cf2_507b9d4141fa"
    ".slice/crio-2227daf62df6694645fee5df53c1f91271546a9560e8600a525690ae252b7f63.scope\n"
)


# --- pure detection ------------------------------------------------------------------------------


def test_docker_cgroup_v1_is_found_by_its_first_docker_line():
    assert cgroup_engine_line(DOCKER_CGROUP_V1) == (
        "12:hugetlb:/docker/c33988ec7651ebc867cb24755eaf637a6734088bc7eef59d5799293a9e5450f7"
    )


@pytest.mark.parametrize("text", [K8S_CGROUP_V1, K8S_CGROUP_SLICE])
def test_kubernetes_cgroups(text):
    assert cgroup_engine_line(text) == text.strip()


@pytest.mark.parametrize("text", [HOST_CGROUP_V1, "0::/\n", "0::/user.slice/user-1000.slice/session-1.scope\n", ""])
def test_no_engine_in_host_or_namespaced_cgroups(text):
    assert cgroup_engine_line(text) is None


def test_overlay_root_in_docker_and_podman_cgroup_v2():
    assert overlay_root(DOCKER_CGROUP_V2_MOUNTINFO) == "overlay"
    assert overlay_root(PODMAN_CGROUP_V2_MOUNTINFO) == "overlay"


@pytest.mark.parametrize(
    "text",
    [
        PROC5_EXAMPLE,
        "25 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw\n",  # written here in proc(5)'s format
        "garbage\n",
        "1 2 3 4 / x\n",
        "",
    ],
)
def test_no_overlay_root(text):
    assert overlay_root(text) is None


def test_cgroup_v2_private_namespace_falls_back_to_mountinfo():
    found = detect_container(dockerenv=False, containerenv=False, cgroup="0::/\n", mountinfo=DOCKER_CGROUP_V2_MOUNTINFO)
    assert found == (True, "/proc/self/mountinfo: / is overlay")


def test_host_and_unknown():
    host = detect_container(dockerenv=False, containerenv=False, cgroup=HOST_CGROUP_V1, mountinfo=PROC5_EXAMPLE)
    assert host == (False, None)
    assert detect_container(dockerenv=False, containerenv=False, cgroup=None, mountinfo=None) == (None, None)


# --- a fixture root ------------------------------------------------------------------------------


def _pci(top: Path, address: str, ids: dict[str, str], driver: str | None = None) -> None:
    """sysfs layout: /sys/bus/pci/devices/<addr> -> ../../../devices/pci0000:00/<addr>."""
    real = top / "sys/devices/pci0000:00" / address
    real.mkdir(parents=True)
    for name, value in ids.items():
        (real / name).write_text(value + "\n")
    if driver is not None:
        (top / "sys/bus/pci/drivers" / driver).mkdir(parents=True, exist_ok=True)
        (real / "driver").symlink_to(f"../../../bus/pci/drivers/{driver}")
    link = top / "sys/bus/pci/devices" / address
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(f"../../../devices/pci0000:00/{address}")


@pytest.fixture
def host(tmp_path: Path) -> Path:
    top = tmp_path / "root"
    # an A2 card as `npu-smi info -t board` reports it (corpus from_ascend_deployer_5.txt:
    # PCI 0x19E5/0xD802, subsystem 0x19E5/0x3002); sysfs prints ids lower-case. The driver name is
    # made up: the test checks that the link's last component is taken.
    npu = {
        "vendor": "0x19e5",
        "device": "0xd802",
        "subsystem_vendor": "0x19e5",
        "subsystem_device": "0x3002",
        "class": "0x120000",
    }
    _pci(top, "0000:c1:00.0", npu, driver="npu_test_driver")
    _pci(top, "0000:01:00.0", npu)  # a second card, no driver bound
    _pci(top, "0000:00:1f.0", {"vendor": "0x8086", "device": "0x1234", "class": "0x060100"})
    # another Huawei function (a network controller; id made up, outside the card map)
    _pci(top, "0000:7d:00.0", {"vendor": "0x19e5", "device": "0xa2ff", "class": "0x020000"})
    dev = top / "dev"
    dev.mkdir()
    for name in ("davinci10", "davinci2", "davinci_manager", "devmm_svm", "davinciX"):
        (dev / name).write_text("")
    (dev / "davinci2").chmod(0o400)  # read-only: not usable by the runtime
    (top / "proc/1").mkdir(parents=True)
    (top / "proc/1/cgroup").write_text(HOST_CGROUP_V1)
    return top


def test_probe_devices_on_a_fixture_host(host):
    devices = probe_devices(Root(host))
    assert [(p.address, p.device, p.subsystem_device, p.driver, p.pci_class) for p in devices.pci] == [
        ("0000:01:00.0", "0xd802", "0x3002", None, "0x120000"),
        ("0000:7d:00.0", "0xa2ff", None, None, "0x020000"),
        ("0000:c1:00.0", "0xd802", "0x3002", "npu_test_driver", "0x120000"),
    ]
    assert all(p.vendor == "0x19e5" for p in devices.pci)
    assert [p.address for p in npu_functions(devices.pci)] == ["0000:01:00.0", "0000:c1:00.0"]
    as_root = os.geteuid() == 0  # root may write a 0400 file
    assert [(n.path, n.exists, n.accessible) for n in devices.nodes] == [
        ("/dev/davinci2", True, as_root),
        ("/dev/davinci10", True, True),
        ("/dev/davinci_manager", True, True),
        ("/dev/devmm_svm", True, True),
        ("/dev/hisi_hdc", False, None),
    ]
    assert (devices.in_container, devices.container_evidence) == (False, None)
    assert devices.errors == ()


def test_container_without_device_nodes_or_sysfs(tmp_path):
    top = tmp_path / "root"
    (top / "dev").mkdir(parents=True)
    (top / ".dockerenv").write_text("")
    devices = probe_devices(Root(top))
    assert devices.pci == ()
    assert [(n.path, n.exists) for n in devices.nodes] == [
        ("/dev/davinci_manager", False),
        ("/dev/devmm_svm", False),
        ("/dev/hisi_hdc", False),
    ]
    assert (devices.in_container, devices.container_evidence) == (True, "/.dockerenv")
    assert [e.kind for e in devices.errors] == ["not-found"]
