"""``scripts/cluster up|down|status``: the test cluster, kept up for a person to try.

``up`` builds the layout of docs/across-machines.md on this machine (a broker host, a database
host, an API host and worker hosts, each a network namespace) and prints how to reach it; the
secrets go to a file only root reads, never to the terminal. ``down`` removes every cluster
``up`` made. Needs root.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from harness.cluster import Cluster, Unavailable
from harness.cluster.net import STATE_ROOT, kept_clusters, remove


def up(workers: int, tls: bool) -> int:
    try:
        cluster = Cluster.create(workers=workers, tls=tls, keep=True)
    except Unavailable as exc:
        print(f"scripts/cluster: {exc}", file=sys.stderr)
        return 1
    for name in cluster.workers:
        cluster.worker_ready(name)
    secrets_file = cluster.folder / "connection.env"
    env = {**cluster.connection_env(), "API_KEY": cluster.api_key}
    secrets_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    os.chmod(secrets_file, 0o600)
    hosts = {name: host.address for name, host in cluster.network.hosts.items()}
    print(f"cluster {cluster.network.tag} is up on {cluster.network.subnet}:")
    for name, address in hosts.items():
        print(f"  {name:7} {address}  (ip netns exec {cluster.network.hosts[name].namespace} ...)")
    print(f"API:      {cluster.api.url}  (the key is in {secrets_file})")
    print(f"logs:     {cluster.folder}/*.log")
    print("try:      set -a; . " + str(secrets_file) + "; set +a")
    print(
        f"          playtester submit alquerque --agents random,random --matches 2000 "
        f"--server {cluster.api.url} --wait"
    )
    print("stop:     scripts/cluster down")
    # The servers run on in their hosts; this process alone ends.
    return 0


def down(tag: str | None) -> int:
    states = [s for s in kept_clusters() if tag is None or s["tag"] == tag]
    for state in states:
        remove(str(state["tag"]))
        print(f"cluster {state['tag']} removed")
    if not states:
        print("no cluster is up")
    return 0


def status() -> int:
    states = kept_clusters()
    for state in states:
        print(json.dumps({"tag": state["tag"], "hosts": state["hosts"]}))
    if not states:
        print(f"no cluster is up ({STATE_ROOT})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/cluster", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("up", help="build a cluster and leave it running")
    start.add_argument("--workers", type=int, default=2, help="worker hosts (default 2)")
    start.add_argument("--tls", action="store_true", help="TLS to Redis and PostgreSQL")
    stop = sub.add_parser("down", help="remove the clusters 'up' made (all, or the one named)")
    stop.add_argument("tag", nargs="?", help="the cluster's tag, as 'up' and 'status' print it")
    sub.add_parser("status", help="list the clusters that are up")
    args = parser.parse_args(argv)
    if args.command == "up":
        return up(args.workers, args.tls)
    if args.command == "down":
        return down(args.tag)
    return status()


if __name__ == "__main__":
    sys.exit(main())
