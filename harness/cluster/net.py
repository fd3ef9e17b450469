"""Hosts on one machine: a Linux network namespace per host, a veth link per host onto a bridge.

Each host has its own network stack and address on a /24 from 198.18.0.0/15 (the range kept for
network tests) and reaches the others only over its link; ``cut`` sets the host's end of the
link down, like a pulled cable, and ``mend`` puts it back. The machine itself sits on the bridge
at ``.1``, so a test reaches every host and no host reaches anything beyond the bridge.

Everything made here is named ``ptc<tag>...`` and written down in a state folder
(``STATE_ROOT/<tag>``) with the process that owns it, so a run that died without cleaning up is
cleaned by the next one (``remove_leftovers``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "ptc"
STATE_ROOT = Path(tempfile.gettempdir()) / "playtester-cluster"
NETWORKS = range(1, 255)
"""The third octet of the /24s a cluster may take in 198.18.0.0/24 ... 198.18.254.0/24."""


class Unavailable(RuntimeError):  # noqa: N818 - it says what is, not an error of ours
    """Namespaces, links or bridges cannot be made here (not root, no iproute2, a container
    without the capability)."""


def _run(*command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, check=check, capture_output=True, text=True)


def check_available() -> None:
    """Raise ``Unavailable`` saying why namespaces cannot be made here."""
    if os.geteuid() != 0:
        raise Unavailable("network namespaces need root (the cluster tests run as root in CI)")
    for tool in ("ip", "unshare", "runuser"):
        if shutil.which(tool) is None:
            raise Unavailable(f"{tool} is not installed (iproute2 / util-linux)")
    probe = f"{PREFIX}probe{os.getpid() % 100000}"
    made = _run("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        raise Unavailable(f"cannot make a network namespace: {made.stderr.strip()}")
    _run("ip", "netns", "del", probe, check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _state_lock() -> Iterator[None]:
    STATE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(STATE_ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _used_networks() -> set[int]:
    """Third octets of the 198.18.x.0/24 networks on this machine's interfaces or in a state."""
    used = set()
    text = _run("ip", "-4", "-o", "addr", check=False).stdout
    for octet in re.findall(r"inet 198\.18\.(\d+)\.", text):
        used.add(int(octet))
    for state in STATE_ROOT.glob("*/state.json"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            used.add(int(json.loads(state.read_text())["network"]))
    return used


@dataclass
class Host:
    """One namespace: ``name`` (its hostname too), its address, its link's two ends."""

    name: str
    address: str
    namespace: str
    link: str

    def command(self, argv: Sequence[str], *, user: str | None = None) -> list[str]:
        """``argv`` run inside the host, under its own hostname (and as ``user``)."""
        inner = list(argv)
        if user is not None:
            inner = ["runuser", "-u", user, "--", *inner]
        return [
            *("ip", "netns", "exec", self.namespace, "unshare", "--uts", "--"),
            *("sh", "-c", 'hostname "$0" && exec "$@"', self.name, *inner),
        ]

    def pids(self) -> list[int]:
        """Every process running in the host's namespace."""
        out = _run("ip", "netns", "pids", self.namespace, check=False).stdout
        return [int(p) for p in out.split()]

    def signal_all(self, sig: signal.Signals) -> None:
        """Send ``sig`` to every process of the host: SIGSTOP freezes it as a hung machine would,
        SIGCONT lets it go on."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def kill_all(self) -> None:
        """SIGKILL every process of the host, as a power cut would; wait until none is left."""
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)


@dataclass
class Network:
    """A bridge and its hosts, owned by one process; ``close`` removes all of it."""

    tag: str
    network: int
    folder: Path
    hosts: dict[str, Host] = field(default_factory=dict)
    keep: bool = False
    pids: list[int] = field(default_factory=list)

    @property
    def bridge(self) -> str:
        return f"{PREFIX}{self.tag}"

    def address(self, last: int) -> str:
        return f"198.18.{self.network}.{last}"

    @property
    def gateway(self) -> str:
        """The machine's own address on the bridge."""
        return self.address(1)

    @property
    def subnet(self) -> str:
        return f"198.18.{self.network}.0/24"

    @classmethod
    def create(cls, *, keep: bool = False) -> Network:
        """A new bridge on a free /24, written down before anything is made."""
        check_available()
        remove_leftovers()
        with _state_lock():
            used = _used_networks()
            free = [n for n in NETWORKS if n not in used]
            if not free:
                raise Unavailable("every 198.18.x.0/24 is taken by other clusters")
            tag = uuid.uuid4().hex[:5]
            folder = STATE_ROOT / tag
            folder.mkdir(parents=True)
            net = cls(tag=tag, network=free[os.getpid() % len(free)], folder=folder, keep=keep)
            net.save()
        try:
            _run("ip", "link", "add", net.bridge, "type", "bridge")
            _run("ip", "addr", "add", f"{net.gateway}/24", "dev", net.bridge)
            _run("ip", "link", "set", net.bridge, "up")
        except subprocess.CalledProcessError as exc:
            net.close()
            raise Unavailable(f"cannot make a bridge: {exc.stderr.strip()}") from exc
        return net

    def save(self) -> None:
        state = {
            "owner": os.getpid(),
            "keep": self.keep,
            "tag": self.tag,
            "network": self.network,
            "hosts": {n: [h.address, h.namespace, h.link] for n, h in self.hosts.items()},
            "pids": self.pids,
        }
        (self.folder / "state.json").write_text(json.dumps(state))

    def add_host(self, name: str, last: int) -> Host:
        """A namespace named after the host, linked to the bridge at ``198.18.x.<last>``."""
        host = Host(
            name=name,
            address=self.address(last),
            namespace=f"{PREFIX}{self.tag}-{name}",
            link=f"{PREFIX}{self.tag}-{name}"[:15],
        )
        self.hosts[name] = host
        self.save()
        peer = f"{PREFIX}{self.tag}x{name}"[:15]
        ns = ("ip", "-n", host.namespace)
        _run("ip", "netns", "add", host.namespace)
        _run("ip", "link", "add", host.link, "type", "veth", "peer", "name", peer)
        _run("ip", "link", "set", peer, "netns", host.namespace)
        _run(*ns, "link", "set", peer, "name", "eth0")
        _run(*ns, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _run(*ns, "link", "set", "lo", "up")
        _run(*ns, "link", "set", "eth0", "up")
        _run("ip", "link", "set", host.link, "master", self.bridge, "up")
        return host

    def remember(self, pid: int) -> None:
        """A process started for the cluster, killed by ``close`` (and by a later cleanup)."""
        self.pids.append(pid)
        self.save()

    def cut(self, name: str) -> None:
        """Pull the host's cable: its link goes down, packets to and from it are lost."""
        _run("ip", "link", "set", self.hosts[name].link, "down")

    def mend(self, name: str) -> None:
        _run("ip", "link", "set", self.hosts[name].link, "up")

    def throttle(self, name: str, kbit: int) -> None:
        """Slow what leaves the host to ``kbit`` kbit/s (a token bucket on its side of the
        link), so that a chunk's write takes long enough to be cut in the middle."""
        host = self.hosts[name]
        _run(
            *("ip", "netns", "exec", host.namespace, "tc", "qdisc", "replace", "dev", "eth0"),
            *("root", "tbf", "rate", f"{kbit}kbit", "burst", "16kb", "latency", "2s"),
        )

    def close(self) -> None:
        _teardown(self.tag, [h.namespace for h in self.hosts.values()], self.pids)


def _end_databases(folder: Path, timeout: float = 10.0) -> None:
    """Shut each host's PostgreSQL down at once (SIGQUIT) and wait for its lock file to go.

    A postmaster killed outright leaves its shared memory segments on the machine for good; an
    immediate shutdown removes them and is as abrupt for everything else.
    """
    pid_files = list(folder.glob("*/data/postmaster.pid"))
    for pid_file in pid_files:
        with contextlib.suppress(OSError, ValueError, IndexError, ProcessLookupError):
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGQUIT)
    deadline = time.monotonic() + timeout
    while any(f.exists() for f in pid_files) and time.monotonic() < deadline:
        time.sleep(0.05)


def _teardown(tag: str, namespaces: Sequence[str], pids: Sequence[int]) -> None:
    _end_databases(STATE_ROOT / tag)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    listed = _run("ip", "netns", "list", check=False).stdout
    ours = {line.split()[0] for line in listed.splitlines() if line.startswith(f"{PREFIX}{tag}-")}
    for namespace in sorted(ours | set(namespaces)):
        host = Host(name="", address="", namespace=namespace, link="")
        host.kill_all()
        _run("ip", "netns", "del", namespace, check=False)
    links = _run("ip", "-o", "link", check=False).stdout
    for name in re.findall(rf"^\d+: ({PREFIX}{tag}[^:@]*)", links, flags=re.M):
        _run("ip", "link", "del", name, check=False)
    shutil.rmtree(STATE_ROOT / tag, ignore_errors=True)


def remove_leftovers() -> list[str]:
    """Remove every cluster whose owning process is gone (and that was not kept on purpose by
    ``scripts/cluster up``); return their tags."""
    removed = []
    with _state_lock():
        for state_file in STATE_ROOT.glob("*/state.json"):
            try:
                state = json.loads(state_file.read_text())
            except (OSError, ValueError):
                continue
            if state.get("keep") or _alive(int(state["owner"])):
                continue
            tag = str(state["tag"])
            namespaces = [h[1] for h in state.get("hosts", {}).values()]
            _teardown(tag, namespaces, state.get("pids", []))
            removed.append(tag)
    return removed


def kept_clusters() -> list[dict[str, object]]:
    """The states of clusters kept on purpose (``scripts/cluster up``)."""
    out = []
    for state_file in STATE_ROOT.glob("*/state.json"):
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(state_file.read_text())
            if state.get("keep"):
                out.append(state)
    return out


def remove(tag: str) -> None:
    """Remove the cluster ``tag`` whoever owns it (``scripts/cluster down``)."""
    state_file = STATE_ROOT / tag / "state.json"
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    namespaces = [h[1] for h in state.get("hosts", {}).values()]
    _teardown(tag, namespaces, state.get("pids", []))
