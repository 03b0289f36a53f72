"""`ascenv fleet rollout` against its floor: the same installs done by hand with Ansible.

6 real sshd nodes on 127.0.0.1 (tests/fleet/sshnodes.py), each with a root of its own (the
a2-cann800 fixture tree) and an install path in it. The floor is one ``ansible -m copy`` of the
package and one ``ansible -m command`` running its installer, over the 6 nodes (what a team does
without ascenv: no kept previous vendor, no gate, no journal). The rollout runs in one wave
(``--canary 0``) and with a canary (``--canary 1``: two waves, one after the other). Reported:
wall times and ratios; the gates' own cost apart (``ascenv op check`` on one node's tree, as the
node runs it, times 6: an upper bound, the nodes run theirs at once).

    .venv/bin/python bench/bench_rollout.py   (as root: the nodes' sshd logs in as root; needs makeself)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from ascenv import proc, store  # noqa: E402
from tests.cli_helpers import run_cli  # noqa: E402
from tests.fleet.conftest import _controller_env  # noqa: E402
from tests.fleet.sshnodes import client_key, fixture_nodes, ssh_config, sshd_available, stop_node  # noqa: E402
from tests.package.pkgbuild import MAKESELF, stored_npu_build  # noqa: E402

NODES = 6
OPP = "/opt/opp"
KEY = "b" * 64


def _inventory(path: Path, nodes: dict, key: Path, config: Path) -> Path:
    lines = ["[ascend]"]
    for name, n in nodes.items():
        lines.append(
            f"{name} ansible_host=127.0.0.1 ansible_port={n.port} ascenv_root={n.root}"
            f" ascenv_remote_tmp={n.home}/.ascenv-fleet-tmp real_opp={n.root}{OPP}"
        )
    lines += ["", "[ascend:vars]", "ansible_user=root", f"ansible_ssh_private_key_file={key}"]
    lines += [f"ansible_ssh_common_args='-F {config}'", ""]
    path.write_text("\n".join(lines))
    return path


def _reset(nodes: dict) -> None:
    for node in nodes.values():
        shutil.rmtree(node.root / OPP.lstrip("/"), ignore_errors=True)


def by_hand(inventory: Path, package: Path, env: dict) -> float:
    ansible = str(Path(sys.executable).parent / "ansible")
    start = time.perf_counter()
    copied = proc.run(
        [
            ansible,
            "-i",
            str(inventory),
            "all",
            "-m",
            "copy",
            "-a",
            f"src={package} dest=/tmp/{{{{ inventory_hostname }}}}.run",
        ],
        timeout=600,
        env=env,
    )
    ran = proc.run(
        [
            ansible,
            "-i",
            str(inventory),
            "all",
            "-m",
            "command",
            "-a",
            "bash /tmp/{{ inventory_hostname }}.run --install-path={{ real_opp }}",
        ],
        timeout=600,
        env=env,
    )
    seconds = time.perf_counter() - start
    assert copied.ok and ran.ok, copied.stdout[-2000:] + ran.stdout[-2000:]
    return seconds


def rollout(inventory: Path, ctl: Path, env: dict, canary: int) -> float:
    shutil.rmtree(ctl / "ascenv-fleet-rollout", ignore_errors=True)
    start = time.perf_counter()
    code, _, err = run_cli(
        ["fleet", "rollout", "add_custom", "--build", KEY, "-i", str(inventory), "--install-path", OPP]
        + ["--canary", str(canary)],
        env,
        cwd=ctl,
    )
    seconds = time.perf_counter() - start
    assert code == 0, err
    return seconds


def gates(node_root: Path, node_env: dict) -> float:
    env = {**node_env, "ASCEND_CUSTOM_OPP_PATH": f"{OPP}/vendors/customize", "HOME": str(node_root)}
    start = time.perf_counter()
    code, _, err = run_cli(["op", "check", "--root", str(node_root), "--format", "json"], env)
    assert code == 0, err
    return time.perf_counter() - start


def main() -> int:
    why = sshd_available() or (None if MAKESELF else "makeself is not installed")
    if why:
        print(f"bench_rollout: {why}")
        return 2
    base = Path(tempfile.mkdtemp(prefix="bench-rollout-"))
    nodes = {}
    try:
        key = client_key(base)
        config = ssh_config(base, key)
        nodes = fixture_nodes(base, NODES, key)
        env = _controller_env(base)
        inventory = _inventory(base / "hosts.ini", nodes, key, config)
        ctl = base / "ctl"
        entry = stored_npu_build(store.Store(ctl / ".ascenv" / "store"), KEY, base / "pkg", arch="x86_64")
        package = next(entry.outputs.iterdir())
        ansible = str(Path(sys.executable).parent / "ansible")
        proc.run([ansible, "-i", str(inventory), "all", "-m", "ping"], timeout=120, env=env)  # warm caches
        _reset(nodes)
        hand_s = by_hand(inventory, package, env)
        _reset(nodes)
        one_s = rollout(inventory, ctl, env, 0)
        _reset(nodes)
        canary_s = rollout(inventory, ctl, env, 1)
        first = next(iter(nodes.values()))
        gate_s = gates(first.root, first.environ) * NODES
        print(f"by hand (ansible -m copy + command): {hand_s:.2f} s for {NODES} nodes")
        print(f"rollout, one wave:   {one_s:.2f} s (ratio {one_s / hand_s:.2f})")
        print(f"rollout, canary + 1: {canary_s:.2f} s (ratio {canary_s / hand_s:.2f})")
        print(f"gates (op check) alone: {gate_s:.2f} s summed over the {NODES} nodes (upper bound)")
        return 0
    finally:
        for node in nodes.values():
            stop_node(node)
        for name in nodes:
            with contextlib.suppress(OSError):
                os.unlink(f"/tmp/{name}.run")  # what the by-hand copy left
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
