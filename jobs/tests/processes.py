"""Start real scheduler processes against the test database, and wait for them boundedly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

BASE_DIR = Path(settings.BASE_DIR)


def database_url() -> str:
    """A DATABASE_URL naming the database this test process is using right now."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    user = quote(db.get("USER") or "")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    host = db.get("HOST") or "127.0.0.1"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    scheme = "mysql" if db["ENGINE"].endswith("mysql") else "postgres"
    return f"{scheme}://{auth}{host}{port}/{db['NAME']}"


def child_env(**extra: object) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "scheduler_site.test_settings",
            "DATABASE_URL": database_url(),
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "INFO",
        }
    )
    env.update({key: str(value) for key, value in extra.items()})
    return env


class ManagedProcess:
    """A manage.py command in its own process, its output captured to a file."""

    # A line the process logs once it handles SIGTERM itself (see stop); "" for none.
    ready_line = ""

    def __init__(self, *args: str, **env: object) -> None:
        self.output = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the process
            prefix="proc-", suffix=".log", delete=False
        )
        self.popen = subprocess.Popen(
            [sys.executable, str(BASE_DIR / "manage.py"), *args],
            cwd=BASE_DIR,
            env=child_env(**env),
            stdout=self.output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def log(self) -> str:
        return Path(self.output.name).read_text(errors="replace")

    def signal(self, signum: int) -> None:
        self.popen.send_signal(signum)

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(timeout=10)

    def wait(self, timeout: float) -> int:
        return self.popen.wait(timeout=timeout)

    def stop(self, timeout: float = 30) -> int:
        if self.popen.poll() is None:
            self._wait_ready(READY_WAIT_SECONDS)
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        return self.popen.wait(timeout=timeout)

    def _wait_ready(self, timeout: float) -> None:
        """Until the process says it handles SIGTERM (or ends): on a loaded machine a
        scheduler can still be importing Django when a test is done with it, and a
        SIGTERM then meets Python's default handler (exit -15), not the scheduler's."""
        if not self.ready_line:
            return
        deadline = time.monotonic() + timeout
        while self.popen.poll() is None and self.ready_line not in self.log():
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)

    def cleanup(self) -> None:
        if self.popen.poll() is None:
            self.kill()
        self.output.close()
        os.unlink(self.output.name)


# How long stop() waits for a process to say it is ready before it signals it anyway.
READY_WAIT_SECONDS = 60


def scheduler(*args: str, **env: object) -> ManagedProcess:
    process = ManagedProcess("runscheduler", *args, **env)
    if "--once" not in args and str(env.get("LOG_LEVEL", "INFO")) in ("INFO", "DEBUG"):
        # Logged (at INFO) by the scheduler once its own SIGTERM handler is in place.
        process.ready_line = " started: "
    return process


def wait_until(condition: Callable[[], object], timeout: float, interval: float = 0.05) -> object:
    """Poll `condition` until it is truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


def redis_url_or_skip() -> str:
    """The Redis the Huey process tests may use (JOBS_TEST_REDIS_URL, default DB 1); the
    test is skipped when none answers there."""
    import pytest
    import redis

    url = os.environ.get("JOBS_TEST_REDIS_URL", "redis://127.0.0.1:6379/1")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except Exception as error:  # pragma: no cover - no Redis on this machine
        pytest.skip(f"no Redis at {url}: {error}")
    return url


def huey_worker(*args: str, **env: object) -> ManagedProcess:
    return ManagedProcess("run_huey", "--workers", "4", "--quiet", *args, **env)


class _PortTaken(Exception):
    """Another process listens on the port a private redis-server was to take."""


class RedisServer:
    """A private redis-server on a free loopback port, so a test may restart it."""

    def __init__(self) -> None:
        import shutil

        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed")
        self.binary = binary
        self.port = self._free_port()
        self.process: subprocess.Popen | None = None
        self.started = False

    @staticmethod
    def _free_port() -> int:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return probe.getsockname()[1]

    @property
    def url(self) -> str:
        """Read it after the first start(), which may have moved to another port."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        # A restart keeps its port (the processes' REDIS_URL names it); a first start whose
        # port another pytest-xdist worker took meanwhile moves to a fresh one.
        for _ in range(1 if self.started else 3):
            try:
                self._start()
                break
            except _PortTaken:
                self.stop()
                self.port = self._free_port()
        else:
            raise AssertionError(f"redis-server could not listen on port {self.port}")
        self.started = True

    def _start(self) -> None:
        import socket

        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        process = self.process
        ours = f"process_id:{process.pid}\r\n".encode()

        def answers() -> bool:
            # The port was free when probed, but with pytest-xdist another worker's
            # server may take it first: this one then exits while that one answers. So
            # the server that answers must say it is our process.
            if process.poll() is not None:
                raise _PortTaken(self.port)
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"INFO server\r\n")
                    reply = b""
                    while b"process_id:" not in reply or not reply.endswith(b"\r\n"):
                        chunk = conn.recv(4096)
                        if not chunk or len(reply) > 65536:
                            break
                        reply += chunk
            except OSError:
                return False
            if b"process_id:" in reply and ours not in reply:
                raise _PortTaken(self.port)
            return ours in reply

        wait_until(answers, timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def with_private_files(tmp_path: Path, commands: str, **env: str) -> subprocess.CompletedProcess:
    """`commands` in bash in tmp_path with scripts/_private_files.sh sourced (what
    scripts/start uses), under the loose umask most accounts have (022)."""
    script = (
        f"set -euo pipefail; umask 022; source {BASE_DIR / 'scripts/_private_files.sh'}; {commands}"
    )
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    return subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env={"PATH": path, "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


class CeleryWorker:
    """A real `celery -A jobs.tests.celery_tasks worker` (prefork, `concurrency` child
    processes) over the Redis that `env` names, its output captured to a file; started
    once it says it is ready."""

    def __init__(
        self, env: dict[str, str], *, concurrency: int = 2, queues: str = "celery"
    ) -> None:
        self.output = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the process
            prefix="celery-", suffix=".log", delete=False
        )
        self.popen = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "jobs.tests.celery_tasks",
                "worker",
                "--concurrency",
                str(concurrency),
                "--queues",
                queues,
                "--hostname",
                f"tests-{os.getpid()}@%h",
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "INFO",
            ],
            cwd=BASE_DIR,
            env={**os.environ, **env},
            stdout=self.output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until(self._ready, timeout=60, interval=0.1)
        except AssertionError:
            self.cleanup()
            raise

    def _ready(self) -> bool:
        if self.popen.poll() is not None:
            raise AssertionError(f"the Celery worker exited:\n{self.log()}")
        return " ready." in self.log()

    def log(self) -> str:
        return Path(self.output.name).read_text(errors="replace")

    def cleanup(self) -> None:
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=10)
        self.output.close()
        os.unlink(self.output.name)
