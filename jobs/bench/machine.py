"""The machine a figure was measured on, and this process's memory and CPU."""

from __future__ import annotations

import os
import platform
import subprocess
import threading
import time
from array import array
from pathlib import Path

from jobs import conf
from jobs.bench.report import Result
from jobs.sql import store
from jobs.sql.bench import bench_support

# --- the machine -------------------------------------------------------------------------


def machine_info() -> Result:
    """What a figure depends on, to compare figures between commits and machines."""
    import django

    info: Result = {
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "django": django.get_version(),
        "database": store().vendor,
        "git_commit": None,
        "git_dirty": None,
        "load_average": load_average(),
    }
    base = conf.project_dir()
    try:
        info["git_commit"] = _git(base, "rev-parse", "HEAD")
        info["git_dirty"] = bool(_git(base, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def _git(base: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=base, capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout.strip()


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def load_average() -> list[float] | None:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def database_version() -> str:
    return bench_support().database_version()


# --- memory and CPU of this process ------------------------------------------------------


def rss_mb() -> float | None:
    """Resident memory now (Linux's /proc; None elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def cpu_seconds() -> float:
    """CPU time of this process, every thread, user and system."""
    times = os.times()
    return times.user + times.system


def sqlite_memory_mb() -> float | None:
    """Memory SQLite's allocator holds in this process (its page caches, mostly); None
    where it cannot be read, and on a database server (its memory is not ours)."""
    return bench_support().in_process_memory_mb()


class RssSampler:
    """Samples resident memory (and SQLite's share of it) every `every` seconds in a
    thread of its own, into arrays: the sampling itself hardly takes memory."""

    def __init__(self, every: float = 0.25) -> None:
        self.every = every
        self.times = array("d")  # time.monotonic()
        self.rss = array("d")  # MB
        self.sqlite = array("d")  # MB, or -1 when unknown
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _sample(self) -> None:
        value = rss_mb()
        if value is not None:
            self.times.append(time.monotonic())
            self.rss.append(value)
            sqlite = sqlite_memory_mb()
            self.sqlite.append(-1.0 if sqlite is None else sqlite)

    def _loop(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(self.every):
                return

    def max_between(self, start: float, end: float) -> float | None:
        values = [mb for at, mb in zip(self.times, self.rss, strict=True) if start <= at <= end]
        return max(values) if values else None

    def series(self, start: float, end: float, points: int = 20) -> list[tuple[float, float]]:
        """About `points` (RSS, SQLite) samples evenly spread over [start, end]."""
        every = max((end - start) / points, self.every)
        out: list[tuple[float, float]] = []
        next_at = start
        for at, rss, sqlite in zip(self.times, self.rss, self.sqlite, strict=True):
            if start <= at <= end and at >= next_at:
                out.append((rss, sqlite))
                next_at = at + every
        return out
