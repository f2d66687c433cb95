"""A MariaDB server of a test's own: its data directory, port and socket, so that a test
may restart it while every other test (and helper) keeps the shared server."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

from jobs.tests.processes import wait_until


class PrivateMariadb:
    """mariadbd on a free port with its own data directory, no grant tables (it listens
    on 127.0.0.1 only and lives as long as the test)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.datadir = root / "data"
        self.port = _free_port()
        self.process: subprocess.Popen | None = None
        subprocess.run(
            [
                "mariadb-install-db",
                "--no-defaults",
                f"--datadir={self.datadir}",
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )

    def start(self) -> None:
        with (self.root / "server.log").open("ab") as log:
            self.process = subprocess.Popen(
                [
                    shutil.which("mariadbd") or "/usr/sbin/mariadbd",
                    "--no-defaults",
                    f"--datadir={self.datadir}",
                    f"--port={self.port}",
                    f"--socket={self.root / 'server.sock'}",
                    "--bind-address=127.0.0.1",
                    "--user=root",
                    "--skip-grant-tables",
                    "--innodb-buffer-pool-size=32M",
                    "--character-set-server=utf8mb4",
                    "--collation-server=utf8mb4_unicode_ci",
                ],
                stdout=log,
                stderr=log,
            )
        process = self.process

        def answers() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"mariadbd exited: {(self.root / 'server.log').read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            except OSError:
                return False
            return True

        wait_until(answers, timeout=60, interval=0.1)

    def stop(self) -> None:
        """A clean shutdown (SIGTERM), as a restart by an operator would do."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)

    @contextmanager
    def as_default_database(self, name: str) -> Iterator[None]:
        """The default connection (and so the processes the test starts, which are
        given its URL) on a database `name` of this server, for the block."""
        saved = dict(connection.settings_dict)
        connection.close()
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(self.port), USER="root")
        connection.settings_dict.update(PASSWORD="", NAME="")
        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
            )
        connection.close()
        connection.settings_dict["NAME"] = name
        try:
            yield
        finally:
            connection.close()
            connection.settings_dict.clear()
            connection.settings_dict.update(saved)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
