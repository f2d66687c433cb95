"""The supervisor of one run's processes: started first, it starts the command and
makes sure nothing the command started outlives the run.

Linux only, run as a script (``python -I supervisor.py PARENT GRACE STATUS_FD -- ARGV``)
so that it imports nothing but the standard library: it starts in milliseconds and
reads nothing of the project. jobs/executors/processes.py starts it in a session of its
own; its process id is the run's process group.

Why a supervisor rather than a cgroup per run: a cgroup needs a delegated, writable
cgroup v2 subtree (systemd ``Delegate=yes``, a container that mounts one), and does not
kill anything when the scheduler dies: someone alive has to write ``cgroup.kill``. The
two kernel features used here work for any user, in any container, on every Linux since
3.4:

- ``PR_SET_CHILD_SUBREAPER``: an orphan below the supervisor (a child that called
  ``setsid`` and whose parent exited, a daemon that double-forked) is re-parented to it,
  not to init. So every process the command started is still a descendant of the
  supervisor, found by walking /proc, whatever session or group it moved to.
- ``PR_SET_PDEATHSIG``: the kernel sends the supervisor a signal when the thread that
  started it dies, even by SIGKILL. It then stops every descendant. The command itself
  gets SIGKILL when the supervisor dies (the last resort if the supervisor is killed).

Stopping is the same in every case (the worker's SIGTERM on cancel, timeout or
shutdown; the parent's death; the command's own exit, after LINGER_SECONDS for what it
left to end by itself): SIGTERM to every descendant, SIGKILL after GRACE seconds to what
is left, repeated until none is left, then exit with the command's status (killed by a
signal: the same signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import signal
import sys
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# The signal the kernel sends when the worker dies: one nothing else sends.
PARENT_DIED = signal.SIGUSR1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# After the command exits, how long what it left may take to end by itself.
LINGER_SECONDS = 0.5
POLL_SECONDS = 0.02

_libc = ctypes.CDLL(None, use_errno=True)
# The exit status of every child collected so far, by pid.
_ended: dict[int, int] = {}


def prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def descendants(root: int) -> list[int]:
    """The live processes below `root` (zombies left out), from /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def reap_zombies() -> None:
    """Collect every ended child (the orphans re-parented here too) into _ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _ended[pid] = status


def signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def stop_tree(grace: float, say: Callable[[str], None]) -> None:
    """SIGTERM to every descendant, SIGKILL after `grace` to what is left, until none is."""
    me = os.getpid()
    left = descendants(me)
    if not left:
        return
    signal_all(left, signal.SIGTERM)
    ends = time.monotonic() + grace
    while left and time.monotonic() < ends:
        reap_zombies()
        time.sleep(POLL_SECONDS)
        left = descendants(me)
    if not left:
        return
    say(f"[{len(left)} process(es) still running {grace:g} s after SIGTERM: SIGKILL]")
    # A process may fork between a look and the kill: its child is re-parented here when
    # it dies, so look again until nothing is left.
    for _ in range(1000):
        signal_all(left, signal.SIGKILL)
        reap_zombies()
        left = descendants(me)
        if not left:
            return
        time.sleep(POLL_SECONDS)


def start(command: list[str]) -> int:
    """Fork and exec `command` (PATH from this environment, the run's); its pid. This
    process has one thread, so fork is safe here, and cheaper to start than subprocess.
    Raises OSError when the command cannot be executed."""
    report_read, report_write = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # the command's process
        try:
            os.close(report_read)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            os.execvp(command[0], command)
        except OSError as error:
            os.write(report_write, f"{error.errno or 0} {error.strerror or error}".encode())
        finally:
            os._exit(127)
    os.close(report_write)
    with os.fdopen(report_read, "rb") as report:
        failure = report.read()  # empty: exec closed the pipe (CLOEXEC), it runs
    if failure:
        os.waitpid(pid, 0)
        number, _, message = failure.decode(errors="replace").partition(" ")
        raise OSError(int(number) if number.isdigit() else 0, message)
    return pid


def main(argv: list[str]) -> int:
    parent, grace, status_fd = int(argv[1]), float(argv[2]), int(argv[3])
    command = argv[5:] if argv[4:5] == ["--"] else argv[4:]
    watched = {signal.SIGCHLD, PARENT_DIED, *STOP_SIGNALS}
    # Signals are taken with sigtimedwait in the loop below, never by a handler.
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, PARENT_DIED)

    def say(text: str) -> None:
        with contextlib.suppress(OSError):
            os.write(1, f"{text}\n".encode())

    os.set_inheritable(status_fd, False)
    with os.fdopen(status_fd, "w") as status:
        if os.getppid() != parent:
            status.write("error 0 the worker ended before the command started\n")
            return 1
        try:
            child = start(command)
        except OSError as error:
            status.write(f"error {error.errno or 0} {error.strerror or error}\n")
            return 127
        status.write(f"started {child}\n")

    exit_status: int | None = None
    stop = False
    while exit_status is None and not stop:
        info = signal.sigtimedwait(watched, 1.0)
        if os.getppid() != parent:
            stop = True  # the worker died (the signal may have come before prctl)
        elif info is None or info.si_signo == signal.SIGCHLD:
            reap_zombies()
            exit_status = _ended.get(child)
        else:
            stop = True
    if exit_status is not None:
        # The command ended by itself: what it started may still be ending.
        ends = time.monotonic() + LINGER_SECONDS
        while descendants(os.getpid()) and time.monotonic() < ends:
            reap_zombies()
            time.sleep(POLL_SECONDS)
    stop_tree(grace, say)
    if exit_status is None:
        reap_zombies()
        exit_status = _ended.get(child)
        if exit_status is None:
            exit_status = os.waitpid(child, 0)[1]
    if os.WIFSIGNALED(exit_status):
        # Ended by a signal: end by the same one, so the worker sees what the command did.
        number = os.WTERMSIG(exit_status)
        if number not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
    return os.waitstatus_to_exitcode(exit_status) if os.WIFEXITED(exit_status) else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except KeyboardInterrupt:  # pragma: no cover - SIGINT is blocked
        sys.exit(errno.EINTR)
