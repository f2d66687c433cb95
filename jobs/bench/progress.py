"""Progress of a benchmark on stderr: one text bar per stage."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """A one-line text progress bar: `label [#####.....]  52%  3.1 s`, redrawn in place on
    a terminal; on a pipe or file, one line when a stage starts and one when it ends."""

    WIDTH = 30

    def __init__(self, stream: TextIO | None = None, *, silent: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.silent = silent
        self.tty = self.stream.isatty()
        self.label = ""
        self.total: float | None = None
        self.began = time.perf_counter()
        self._drawn = 0.0
        self._open = False

    def __call__(self, label: str, total: float | None = None) -> None:
        self.stage(label, total)

    def stage(self, label: str, total: float | None = None) -> None:
        self.end()
        self.label, self.total, self.began = label, total, time.perf_counter()
        if self.silent:
            return
        self._open = True
        if self.tty:
            self._draw(0)
        else:
            self.stream.write(f"{label} ...\n")
            self.stream.flush()

    def update(self, done: float) -> None:
        if self._open and self.tty and time.perf_counter() - self._drawn >= 0.1:
            self._draw(done)

    def end(self) -> None:
        if not self._open:
            return
        self._open = False
        elapsed = time.perf_counter() - self.began
        if self.tty:
            self._draw(self.total or 0)
            self.stream.write("\n")
        else:
            self.stream.write(f"{self.label}: done in {elapsed:.1f} s\n")
        self.stream.flush()

    def _draw(self, done: float) -> None:
        self._drawn = time.perf_counter()
        elapsed = self._drawn - self.began
        if self.total:
            fraction = min(1.0, max(0.0, done / self.total))
            filled = round(fraction * self.WIDTH)
            bar = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {fraction * 100:3.0f}%"
        else:
            bar = ""
        self.stream.write(f"\r{self.label:<44.44} {bar} {elapsed:6.1f} s")
        self.stream.flush()
