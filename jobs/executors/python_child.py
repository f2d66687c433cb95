"""The child process of an isolated python run: ``python -m jobs.executors.python_child DIR``.

Started by jobs/executors/python_process.py. It sets Django up (the worker's settings
module and import path are in its environment), reads the run's ticket from DIR, finds
the task and binds its arguments as a worker thread would, and calls it through the
same code (jobs.executors.python.call_task): what the task prints and logs goes to
stdout as it comes (the worker reads it into the run's log), then its return value or
traceback. Its outcome goes to DIR/outcome.json. SIGTERM sets the task's stop signal,
with the reason the worker wrote to DIR/stop; the worker's supervisor kills the process
after the kill grace if the task goes on.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path


def main(directory: Path) -> int:
    import django

    django.setup()

    from jobs.executors.base import STOP_SHUTDOWN, ExecutionContext
    from jobs.executors.output import RunOutput
    from jobs.executors.python import call_task, prepare
    from jobs.executors.python_process import OUTCOME_FILE, STOP_FILE, read_ticket

    class Forwarded(RunOutput):
        """Output written through to stdout at once (kept here: only its last byte)."""

        def write(self, data: str | bytes) -> None:
            if isinstance(data, str):
                data = data.encode("utf-8", "surrogateescape")
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]
            super().write(data[-1:])

    ticket = read_ticket(directory)
    context = ExecutionContext()

    def stop(signum: int, frame: object) -> None:
        try:
            reason = (directory / STOP_FILE).read_text().strip()
        except OSError:
            reason = ""
        context.request_stop(reason or STOP_SHUTDOWN)

    signal.signal(signal.SIGTERM, stop)
    output = Forwarded(max_bytes=64)
    # The worker wrote the command line, and checked the task and its arguments.
    task, bound, refused = prepare(ticket, RunOutput())
    if refused is not None:
        output.write(refused.log.split("\n", 1)[1])
        succeeded = False
    else:
        assert task is not None and bound is not None
        succeeded = call_task(task, bound, ticket, context, output)
    (directory / OUTCOME_FILE).write_text(json.dumps({"succeeded": succeeded}))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
