"""A crontab file, as shell jobs (docs/migrating.md "Coming from crontab").

Read as cron reads it: five fields and a command, or an `@hourly`-style alias; `@reboot`
has no equivalent and is skipped; `CRON_TZ=` (and `TZ=`) switch the zone of the entries
below them; other `NAME=value` lines are the commands' environment, kept in each job's
`env` (the shell executor's environment, so PATH, HOME and the rest mean what they meant);
`#` lines are comments, the one just above an entry naming its job. A system crontab
(/etc/crontab, /etc/cron.d/*, or a file whose every sixth field is a user of this machine)
has a user column: kept in the job's name and key, though the job runs as the scheduler's
user.

cron runs a command with `$SHELL -c` (/bin/sh by default) and the shell executor splits
its command line itself, so each job's command is `/bin/sh -c '<the line's command>'`. A
command with an unescaped `%` (cron's standard input) is skipped; `\\%` is a plain `%`.

Each entry's key is its command (the user's too, in a system crontab; a command listed
twice is numbered), so re-importing an edited schedule updates its job. The jobs are
disabled unless the import says `enable`: a shell job runs anything, and enabling one is
a decision for someone with jobs.use_shell.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import re
import shlex
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, NamedTuple

from django.conf import settings

from jobs.imports.entries import (
    ENABLED,
    Entry,
    Reading,
    Skipped,
    SourceError,
    schedule_fields,
    unique_keys,
)
from jobs.models import ExecutorKind
from jobs.models.choices import NAME_MAX_LENGTH
from jobs.schedules import arithmetic

# Bigger than any crontab a person keeps: a file past it is not one (a log, a dump).
MAX_FILE_BYTES = 1_000_000
ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
ZONE_NAMES = ("CRON_TZ", "TZ")
ENVIRONMENT_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
SYSTEM_PATHS = ("/etc/crontab", "/etc/cron.d/")
# The words of a job's name taken from its command when no comment names it.
NAME_LENGTH = 80
UNESCAPED_PERCENT = re.compile(r"(?<!\\)%")


class CronLine(NamedTuple):
    """An entry line, its fields split off; `zone` and `env` as set above it."""

    number: int
    expression: str
    user: str
    command: str
    zone: str
    env: dict[str, str]
    comment: str


class CrontabSource:
    """The crontab file at `path`; its jobs enabled only with `enable`."""

    def __init__(self, path: str | Path, *, enable: bool = False) -> None:
        self.path = Path(path).absolute()
        self.enable = enable

    def read(self) -> Reading:
        text = self._text()
        lines, skipped = self._lines(text)
        entries: list[Entry] = []
        keys = _keys(lines)
        for line, key in zip(lines, keys, strict=True):
            result = self._entry(line, key)
            (entries if isinstance(result, Entry) else skipped).append(result)
        return Reading(f"crontab:{self.path}", tuple(entries), tuple(skipped))

    def atomic(self) -> AbstractContextManager[Any]:
        return nullcontext()

    def disable(self, keys: Iterable[str]) -> None:
        raise SourceError("a crontab file is never edited: comment out the imported lines")

    def disabled_record(self, record: dict[str, Any]) -> dict[str, Any]:
        return record

    def _text(self) -> str:
        try:
            if self.path.stat().st_size > MAX_FILE_BYTES:
                raise SourceError(f"{self.path} is over {MAX_FILE_BYTES} bytes: not a crontab")
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SourceError(f"{self.path} does not exist") from None
        except IsADirectoryError:
            raise SourceError(f"{self.path} is a folder, not a crontab file") from None
        except UnicodeDecodeError:
            raise SourceError(f"{self.path} is not UTF-8 text") from None
        except OSError as error:
            raise SourceError(f"{self.path} cannot be read: {error.strerror}") from None

    def _lines(self, text: str) -> tuple[list[CronLine], list[Skipped]]:
        zone = settings.TIME_ZONE
        env: dict[str, str] = {}
        comment = ""
        raw = [(n, line.strip()) for n, line in enumerate(text.splitlines(), start=1)]
        system = self._is_system(line for _, line in raw)
        lines: list[CronLine] = []
        skipped: list[Skipped] = []
        for number, line in raw:
            if not line:
                comment = ""
                continue
            if line.startswith("#"):
                comment = line.lstrip("#").strip()
                continue
            setting = ENVIRONMENT_LINE.match(line)
            if setting:
                name, value = setting.group(1), _unquoted(setting.group(2))
                if name in ZONE_NAMES:
                    zone = value or settings.TIME_ZONE
                if name != "CRON_TZ":
                    env = {**env, name: value}
                comment = ""
                continue
            parsed = _split(line, system)
            if isinstance(parsed, str):
                skipped.append(Skipped(f"line {number}", f"line {number}", parsed))
            else:
                expression, user, command = parsed
                lines.append(CronLine(number, expression, user, command, zone, env, comment))
            comment = ""
        return lines, skipped

    def _is_system(self, lines: Iterable[str]) -> bool:
        where = str(self.path)
        if where == SYSTEM_PATHS[0] or where.startswith(SYSTEM_PATHS[1]):
            return True
        sixth = []
        for line in lines:
            if not line or line.startswith("#") or ENVIRONMENT_LINE.match(line):
                continue
            words = line.split()
            sixth.append(words[1] if line.startswith("@") and len(words) > 1 else "")
            if not line.startswith("@"):
                sixth[-1] = words[5] if len(words) > 6 else ""
        return bool(sixth) and all(_is_user(word) for word in sixth)

    def _entry(self, line: CronLine, key: str) -> Entry | Skipped:
        label = f"line {line.number}"
        if "shell" not in ExecutorKind.values:
            return Skipped(key, label, "this site has no shell executor")
        try:
            arithmetic.parse_cron(line.expression)
            arithmetic.time_zone(line.zone)
        except arithmetic.ScheduleError as error:
            return Skipped(key, label, f"{line.expression!r} in {line.zone}: {error}")
        if UNESCAPED_PERCENT.search(line.command):
            return Skipped(
                key,
                label,
                "its command has a “%” (cron's standard input): write it as “\\%”, or "
                "move the input into a script",
            )
        command = line.command.replace("\\%", "%")
        shell = line.env.get("SHELL") or "/bin/sh"
        name = line.comment or command[:NAME_LENGTH]
        if line.user:
            name = f"{line.user}: {name}"
        description = f"Imported from the crontab {self.path}."
        if line.comment:
            description += f" {line.comment}"
        values = {
            "name": name[:NAME_MAX_LENGTH],
            "description": description,
            "executor": "shell",
            "command": f"{shlex.quote(shell)} -c {shlex.quote(command)}",
            "arguments": {"env": dict(line.env)} if line.env else {},
            **schedule_fields(cron=line.expression, timezone=line.zone),
        }
        record = {
            "expression": line.expression,
            "zone": line.zone,
            "user": line.user,
            "command": command,
            "env": line.env,
            "comment": line.comment,
            ENABLED: self.enable,
        }
        notes = []
        if line.user and line.user != _this_user():
            notes.append(f"cron ran it as {line.user}; here it runs as the scheduler's user")
        if not self.enable:
            notes.append("imported disabled (--enable to enable)")
        return Entry(key, f"{label}: {name}", values, record, tuple(notes))


def _split(line: str, system: bool) -> tuple[str, str, str] | str:
    """(expression, user, command) of an entry line, or why it is none."""
    words = line.split()
    if words[0].startswith("@"):
        if words[0] == "@reboot":
            return "@reboot runs at the machine's start: there is no equivalent here"
        expression = ALIASES.get(words[0].lower())
        if expression is None:
            return f"{words[0]} is not a cron alias ({', '.join(ALIASES)})"
        rest = words[1:]
    else:
        if len(words) < 6:
            return "an entry needs five time fields and a command"
        expression, rest = " ".join(words[:5]), words[5:]
    user = ""
    if system:
        if len(rest) < 2:
            return "a system crontab entry needs a user and a command"
        user = rest[0]
    # The command as written (its spacing kept), after the fields before it.
    fields = len(words) - len(rest) + (1 if system else 0)
    command = re.split(r"\s+", line, maxsplit=fields)[-1]
    return expression, user, command


def _keys(lines: list[CronLine]) -> list[str]:
    return list(unique_keys(_key(line) for line in lines))


def _key(line: CronLine) -> str:
    key = f"{line.user}:{line.command}" if line.user else line.command
    if len(key) > NAME_MAX_LENGTH - 20:
        # Room for " #n"; the digest keeps two long commands with one beginning apart.
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        key = f"{key[: NAME_MAX_LENGTH - 40]}…{digest}"
    return key


def _unquoted(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _is_user(name: str) -> bool:
    if not name:
        return False
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _this_user() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return ""
