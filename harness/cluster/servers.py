"""The servers of a test cluster, each in its own host: Redis, PostgreSQL, the API, workers.

Redis asks for a password (``requirepass``, protected mode on) and PostgreSQL for a
scram-sha-256 one; both listen on their host's link address only. With ``tls=True`` both speak
TLS only, with certificates signed by a throwaway certificate authority (``Authority``, made
with ``openssl``), and the URLs the clients get ask them to verify it (``rediss://`` with
``BROKER_CA_FILE``, ``sslmode=verify-full`` with ``DATABASE_CA_FILE``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness.cluster.net import Host, Network

ROOT = Path(__file__).resolve().parents[2]
PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"


def wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``predicate`` until it returns something truthy; raise after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as exc:  # the server may still be starting
            last = exc
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def pg_bin(name: str) -> str:
    """A PostgreSQL server tool, from the newest version installed."""
    found = sorted(Path("/").glob(PG_BIN_GLOB.lstrip("/")), key=lambda p: p.parent.name)
    for folder in reversed(found):
        if (folder / name).exists():
            return str(folder / name)
    located = shutil.which(name)
    if located is None:
        raise FileNotFoundError(f"PostgreSQL's {name} is not installed ({PG_BIN_GLOB})")
    return located


def _as_user(user: str, argv: list[str]) -> list[str]:
    # setpriv executes the program itself (runuser would stay as its parent), so a signal to
    # the process started reaches the server.
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--", *argv]


class Process:
    """A process started in a host, its output in ``<folder>/<name>.log``."""

    def __init__(
        self,
        net: Network,
        host: Host,
        argv: list[str],
        *,
        env: Mapping[str, str],
        log: Path,
        cwd: Path = ROOT,
    ) -> None:
        self.log = log
        with open(log, "ab") as out:
            self.popen = subprocess.Popen(
                host.command(argv),
                env=dict(env),
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        net.remember(self.popen.pid)

    def send(self, number: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, number)

    def stop(self, number: int = signal.SIGTERM, timeout: float = 20) -> None:
        """Ask the process to stop; kill what is left of its group after ``timeout``."""
        self.send(number)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.send(signal.SIGKILL)
            self.popen.wait(10)

    def running(self) -> bool:
        return self.popen.poll() is None

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


class Authority:
    """A throwaway certificate authority and the server certificates it signs."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.cert = folder / "ca.pem"
        self.key = folder / "ca.key"
        self._openssl(
            *("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"),
            *("-keyout", str(self.key), "-out", str(self.cert), "-subj", "/CN=playtester test CA"),
        )

    def _openssl(self, *args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=self.folder)

    def issue(self, name: str, address: str, owner: str | None = None) -> tuple[Path, Path]:
        """A certificate for ``address`` (and the host name ``name``) and its key."""
        key, csr, cert = (self.folder / f"{name}{ext}" for ext in (".key", ".csr", ".pem"))
        ext = self.folder / f"{name}.ext"
        ext.write_text(f"subjectAltName=IP:{address},DNS:{name}\n")
        self._openssl(
            *("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr)),
            *("-subj", f"/CN={name}"),
        )
        self._openssl(
            *("x509", "-req", "-in", str(csr), "-CA", str(self.cert), "-CAkey", str(self.key)),
            *("-CAcreateserial", "-days", "2", "-out", str(cert), "-extfile", str(ext)),
        )
        key.chmod(0o600)
        if owner is not None:
            for path in (key, cert):
                shutil.chown(path, owner, owner)
        return cert, key


class Broker:
    """``redis-server`` with a password, protected mode and an append-only file, listening on
    its host's address (TLS only when an authority is given)."""

    PORT = 6379

    def __init__(
        self, net: Network, host: Host, password: str, authority: Authority | None
    ) -> None:
        self.net, self.host, self.password = net, host, password
        self.folder = net.folder / host.name
        self.folder.mkdir()
        self.tls = authority is not None
        lines = [
            f"bind {host.address}",
            "protected-mode yes",
            f"requirepass {password}",
            f"dir {self.folder}",
            "appendonly yes",
            'save ""',
            "maxmemory-policy noeviction",
        ]
        if authority is not None:
            cert, key = authority.issue(host.name, host.address)
            lines += [
                "port 0",
                f"tls-port {self.PORT}",
                f"tls-cert-file {cert}",
                f"tls-key-file {key}",
                f"tls-ca-cert-file {authority.cert}",
                "tls-auth-clients no",
            ]
        else:
            lines.append(f"port {self.PORT}")
        # The password sits in a file only root reads, never in a command line.
        self.config = self.folder / "redis.conf"
        self.config.write_text("\n".join(lines) + "\n")
        self.config.chmod(0o600)
        self.process: Process | None = None

    def url(self, password: str | None = None, *, tls: bool | None = None) -> str:
        scheme = "rediss" if (self.tls if tls is None else tls) else "redis"
        secret = self.password if password is None else password
        return f"{scheme}://:{secret}@{self.host.address}:{self.PORT}/0"

    def start(self) -> None:
        redis_server = shutil.which("redis-server")
        if redis_server is None:
            raise FileNotFoundError("redis-server is not installed")
        self.process = Process(
            self.net,
            self.host,
            [redis_server, str(self.config)],
            env={"PATH": os.environ.get("PATH", "")},
            log=self.folder / "redis.log",
        )
        wait_until(lambda: "Ready to accept connections" in self.process_text(), 20, "redis")

    def process_text(self) -> str:
        return self.process.text() if self.process is not None else ""

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


class Database:
    """A PostgreSQL cluster from ``initdb``, run as ``postgres``, with a ``playtester`` role
    that logs in with a scram-sha-256 password over the link only (TLS only when an authority
    is given). The machine's administrator reaches it over its Unix socket."""

    PORT = 5432
    NAME = "playtester"
    USER = "playtester"

    def __init__(
        self, net: Network, host: Host, password: str, authority: Authority | None
    ) -> None:
        self.net, self.host, self.password = net, host, password
        self.folder = net.folder / host.name
        self.folder.mkdir()
        shutil.chown(self.folder, "postgres", "postgres")
        self.folder.chmod(0o700)
        self.data = self.folder / "data"
        self.tls = authority is not None
        subprocess.run(
            _as_user(
                "postgres",
                [pg_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth-local=trust"],
            ),
            check=True,
            capture_output=True,
            cwd=self.folder,
        )
        link = "hostssl" if self.tls else "host"
        hba = [
            "local all postgres trust",
            f"{link} all all {net.subnet} scram-sha-256",
        ]
        if self.tls:
            hba.append(f"hostnossl all all {net.subnet} reject")
        (self.data / "pg_hba.conf").write_text("\n".join(hba) + "\n")
        settings = [
            f"listen_addresses = '{host.address}'",
            f"port = {self.PORT}",
            f"unix_socket_directories = '{self.folder}'",
            "password_encryption = 'scram-sha-256'",
            "fsync = off",
            "max_connections = 200",
        ]
        if authority is not None:
            cert, key = authority.issue(host.name, host.address, owner="postgres")
            settings += ["ssl = on", f"ssl_cert_file = '{cert}'", f"ssl_key_file = '{key}'"]
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write("\n".join(settings) + "\n")
        self.authority = authority
        self.process: Process | None = None
        self.start()
        with self.admin() as conn:
            conn.execute(f"CREATE ROLE {self.USER} LOGIN PASSWORD '{password}'")
            conn.execute(f"CREATE DATABASE {self.NAME} OWNER {self.USER}")

    def url(self, password: str | None = None, *, tls: bool | None = None) -> str:
        secret = self.password if password is None else password
        where = f"{self.host.address}:{self.PORT}/{self.NAME}"
        url = f"postgresql+psycopg://{self.USER}:{secret}@{where}"
        return url + "?sslmode=disable" if tls is False else url

    def admin(self, database: str = "postgres") -> Any:
        """An autocommit connection as the superuser, over the Unix socket."""
        import psycopg

        return psycopg.connect(
            host=str(self.folder),
            port=self.PORT,
            user="postgres",
            dbname=database,
            autocommit=True,
        )

    def start(self) -> None:
        self.process = Process(
            self.net,
            self.host,
            _as_user("postgres", [pg_bin("postgres"), "-D", str(self.data)]),
            env={"PATH": os.environ.get("PATH", ""), "LANG": "C"},
            log=self.net.folder / f"{self.host.name}.log",
            cwd=self.folder,
        )
        wait_until(lambda: self.admin().close() is None, 30, "postgresql")

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(signal.SIGINT)  # fast shutdown: sessions end, data is kept
            self.process = None


def tool(name: str) -> str:
    """A command installed beside this interpreter (the project's environment)."""
    return str(Path(sys.executable).parent / name)


def python_env(**values: str) -> dict[str, str]:
    """An environment with nothing but ``values`` (the empty ones left out)."""
    return {k: v for k, v in values.items() if v}


class Api:
    """``playtester serve`` in the API host (it also runs the sweeper)."""

    PORT = 8000

    def __init__(self, net: Network, host: Host, env: Mapping[str, str]) -> None:
        self.net, self.host = net, host
        self.url = f"http://{host.address}:{self.PORT}"
        argv = [
            *(tool("playtester"), "serve", "--no-migrate"),
            *("--host", host.address, "--port", str(self.PORT)),
        ]
        self.process = Process(net, host, argv, env=env, log=net.folder / f"{host.name}.log")


class Worker:
    """``celery -A workers worker`` in a worker host, one task at a time, as compose runs it,
    with a numba cache of its own that starts empty, as on a machine that joins: it plays work
    without compiled code at once."""

    def __init__(self, net: Network, host: Host, env: Mapping[str, str]) -> None:
        self.net, self.host = net, host
        cache = net.folder / host.name / "numba-cache"
        cache.mkdir(parents=True, exist_ok=True)
        argv = [
            *(tool("celery"), "-A", "workers", "worker", "--concurrency=1"),
            *("-Q", "playtester,playtester.control", "-l", "info"),
            *("--without-gossip", "--without-mingle"),
        ]
        self.process = Process(
            net,
            host,
            argv,
            env={**env, "NUMBA_CACHE_DIR": str(cache)},
            log=net.folder / f"{host.name}.log",
        )

    def text(self) -> str:
        return self.process.text()
