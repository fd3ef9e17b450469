"""The test cluster's network: where namespaces cannot be made it says why, and what a run
that died left behind is removed by the next one."""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest
from server_support import server_missing

from harness.cluster import net


def test_without_root_the_cluster_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(net.os, "geteuid", lambda: 1000)
    with pytest.raises(net.Unavailable, match="need root"):
        net.check_available()


def test_the_tests_skip_or_fail_as_servers_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLAYTESTER_REQUIRE_SERVERS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no test cluster here"):
        server_missing("no test cluster here: network namespaces need root")
    monkeypatch.setenv("PLAYTESTER_REQUIRE_SERVERS", "1")
    with pytest.raises(pytest.fail.Exception, match="PLAYTESTER_REQUIRE_SERVERS"):
        server_missing("no test cluster here: network namespaces need root")


def dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def leave_behind(tag: str, owner: int, *, keep: bool) -> str:
    """A namespace and a bridge written down as a run's, the way ``Network`` does."""
    namespace = f"{net.PREFIX}{tag}-w1"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    subprocess.run(["ip", "link", "add", f"{net.PREFIX}{tag}", "type", "bridge"], check=True)
    folder = net.STATE_ROOT / tag
    folder.mkdir(parents=True)
    state = {
        "owner": owner,
        "keep": keep,
        "tag": tag,
        "network": 254,
        "hosts": {"w1": ["198.18.254.10", namespace, namespace]},
        "pids": [],
    }
    (folder / "state.json").write_text(json.dumps(state))
    return namespace


def test_what_a_dead_run_left_is_removed_and_a_kept_cluster_stays() -> None:
    try:
        net.check_available()
    except net.Unavailable as exc:
        server_missing(f"no test cluster here: {exc}")
    dead, kept = uuid.uuid4().hex[:5], uuid.uuid4().hex[:5]
    try:
        leave_behind(dead, dead_pid(), keep=False)
        kept_namespace = leave_behind(kept, dead_pid(), keep=True)
        assert dead in net.remove_leftovers()
        namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True)
        assert f"{net.PREFIX}{dead}" not in namespaces.stdout + links.stdout
        assert not (net.STATE_ROOT / dead).exists()
        assert kept_namespace in namespaces.stdout
    finally:
        net.remove(dead)
        net.remove(kept)
    assert (
        f"{net.PREFIX}{kept}"
        not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    )
