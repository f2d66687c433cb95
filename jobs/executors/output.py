"""A run's output while it runs: kept within JOBS_LOG_MAX_BYTES, readable at any time.

Executors that do real work write what their run prints here (RunOutput.write); the
worker's Heartbeater reads it every JOBS_LIVE_LOG_SECONDS and writes the text so far to
the run's row (the live log), and the executor returns the final text as the run's log.

Only the beginning and the end are kept: half of the limit each. What is between is
counted, and the text says how much was left out. Bytes are kept, not characters, so
a process's output is stored however it is encoded; text() decodes it (invalid UTF-8
replaced) and drops terminal escape sequences and control characters but newlines and
tabs (jobs.text.clean_output), so every executor's log is as clean as every other's;
the engine makes it safe to store (jobs.engine.logs.safe_log).
"""

from __future__ import annotations

import threading

from jobs import conf
from jobs.text import clean_output

# Room kept for the line saying what was left out, within the limit.
_NOTE_ROOM = 100


def log_max_bytes() -> int:
    return conf.log_max_bytes()


class RunOutput:
    """The output of one run, capped. Safe to write from several threads."""

    __slots__ = ("_head", "_lock", "_omitted", "_tail", "changed", "head_limit", "tail_limit")

    def __init__(self, max_bytes: int | None = None) -> None:
        limit = max(log_max_bytes() if max_bytes is None else max_bytes, 2 * _NOTE_ROOM)
        self.head_limit = (limit - _NOTE_ROOM) // 2
        self.tail_limit = limit - _NOTE_ROOM - self.head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self._omitted = 0
        self._lock = threading.Lock()
        # Set by every write, cleared by the live log when it has written the text.
        self.changed = False

    def write(self, data: str | bytes) -> None:
        """Add output (text is encoded as UTF-8)."""
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        if not data:
            return
        with self._lock:
            self.changed = True
            room = self.head_limit - len(self._head)
            if room > 0:
                self._head += data[:room]
                data = data[room:]
                if not data:
                    return
            self._tail += data
            # Trim in steps of at least the limit, so a stream of small writes does not
            # copy the tail at every one of them.
            if len(self._tail) > 2 * self.tail_limit:
                cut = len(self._tail) - self.tail_limit
                self._omitted += cut
                del self._tail[:cut]

    def line(self, text: str) -> None:
        """Add a line of the executor's own (a newline first if the output lacks one)."""
        with self._lock:
            last = self._tail[-1:] or self._head[-1:]
        prefix = "" if not last or last == b"\n" else "\n"
        self.write(f"{prefix}{text}\n")

    @property
    def omitted(self) -> int:
        """Bytes left out so far."""
        with self._lock:
            return self._omitted + max(len(self._tail) - self.tail_limit, 0)

    def text(self) -> str:
        """The output so far: all of it, or its beginning, a line saying how many bytes
        were left out, and its end."""
        with self._lock:
            head = bytes(self._head)
            tail = bytes(self._tail)
            omitted = self._omitted
        if len(tail) > self.tail_limit:
            omitted += len(tail) - self.tail_limit
            tail = tail[-self.tail_limit :]
        if not omitted:
            return clean_output(_decode(head + tail))
        # Cut at line breaks where there is one near, so no line is shown half.
        tail = _from_line_start(tail)
        head_text = _decode(head)
        if not head_text.endswith("\n"):
            head_text += "\n"
        note = f"[… {omitted:,} bytes of output left out (JOBS_LOG_MAX_BYTES) …]\n"
        # Cleaned after the cut: a sequence cut in two leaves no ESC behind either way.
        return clean_output(head_text) + note + clean_output(_decode(tail))


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _from_line_start(tail: bytes) -> bytes:
    """The tail from its first whole line, unless that throws away much of it."""
    newline = tail.find(b"\n", 0, 1024)
    return tail[newline + 1 :] if newline >= 0 else tail
