"""Every command the manual gives runs as written in a new terminal: nothing activated,
PATH as a login shell has it, from the checkout's root. A bare `python`, `pip` or
`pytest` is a virtualenv's name (Debian has only python3, and its pip refuses to install
outside a virtualenv): the manual writes python3 or the checkout's .venv/bin/... instead.

The commands of docs/host-project.md's steps run in the reader's own project, with its
environment; they are not checked here (scripts/check-host runs that project).

The cheap commands run as written (`python3 -c ...`); the others run with --help, which
proves the program and its command are found and start (a benchmark or the whole suite
is too heavy for a test). The settings read an ENV_FILE standing in for the .env that
scripts/start writes.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

pytestmark = pytest.mark.once  # the same on every database and Django (pytest.ini)

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The reader's own project: its python, pip and manage.py, in its own environment.
OWN_PROJECT_PAGES = {"host-project.md"}
# A new terminal's PATH (Debian's login shell), without the virtualenv of whoever runs the test.
NEW_TERMINAL_PATH = "/usr/local/bin:/usr/bin:/bin"
VIRTUALENV_ONLY = {"python", "pip", "pip3", "pytest", "mkdocs", "ruff", "gunicorn", "django-admin"}
SHELL_WORDS = {"cd", "export", "umask", "set", "source", "."}
# Spans that say what the app itself runs, not what the reader types.
DESCRIPTIONS = {"python -m django <line>"}
# Inline spans are commands when they start like one.
COMMAND_SPAN = re.compile(
    r"^(?:[A-Z_]+=\S+\s+)*(?:scripts/|\.venv/|\.ci/|benchmarks/|(?:python3?|pip3?|pytest|curl)\s)"
)
ASSIGNMENTS = re.compile(r"^(?:[A-Z_]+=(?:\"[^\"]*\"|'[^']*'|\S+)\s+)*")
ASSIGNMENT = re.compile(r"^[A-Z_]+=")
CAPTURE = re.compile(r"^[A-Z_]+=\$\((.*)\)$")
HEAVY = {"scripts/start", "scripts/test", "scripts/check-host", ".ci/run"}
TIMEOUT = 120
# What the manual says a command needs: run_huey exists where REDIS_URL is set (Huey's
# app is installed only then); --help connects to nothing.
NEEDS = {"run_huey": {"REDIS_URL": "redis://127.0.0.1:6379/15"}}


class Command(NamedTuple):
    page: str
    line: str  # as the manual writes it

    @property
    def words(self) -> list[str]:
        """The first simple command's words: before any pipe, `&&`, redirection or comment,
        after the variables set for it; the command inside `NAME=$(...)`."""
        line = self.line.lstrip("( ")
        captured = CAPTURE.match(line)
        if captured:
            line = captured.group(1)
        lexer = shlex.shlex(ASSIGNMENTS.sub("", line), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = []
        for word in lexer:
            if set(word) <= set("();<>|&"):
                break
            words.append(word)
        return words

    @property
    def program(self) -> str:
        return self.words[0] if self.words else ""


def _shell_lines(block: str) -> list[str]:
    """The block's lines, a quoted text over several lines (a JSON body) kept in its line."""
    lines: list[str] = []
    pending = ""
    for raw in block.splitlines():
        pending = f"{pending}\n{raw}" if pending else raw.strip()
        try:
            shlex.split(pending, comments=True)
        except ValueError:  # a quotation still open
            continue
        lines.append(pending)
        pending = ""
    return lines


def _block_commands(page: Path, text: str) -> list[Command]:
    commands = []
    for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)  # continuation lines
        for line in _shell_lines(joined):
            if not line or line.startswith(("#", "*")):  # comments, crontab lines
                continue
            words = shlex.split(line, comments=True)
            if all(ASSIGNMENT.match(word) for word in words):  # an environment file's line
                continue
            commands.append(Command(page.name, line))
    return commands


def _span_commands(page: Path, text: str) -> list[Command]:
    outside_blocks = re.sub(r"```.*?```", "", text, flags=re.S)
    return [
        Command(page.name, span)
        for span in re.findall(r"`([^`\n]+)`", outside_blocks)
        if COMMAND_SPAN.match(span) and span not in DESCRIPTIONS
    ]


def docs_commands() -> list[Command]:
    found: list[Command] = []
    for page in PAGES:
        if page.name in OWN_PROJECT_PAGES:
            continue
        text = page.read_text()
        found += _block_commands(page, text) + _span_commands(page, text)
    return found


def _found_in_new_terminal(program: str) -> bool:
    if program in SHELL_WORDS or program.startswith("$"):
        return True
    if "/" in program:
        return (ROOT / program).exists() or Path(program).is_absolute()
    if program in VIRTUALENV_ONLY:
        return False
    return shutil.which(program, path=NEW_TERMINAL_PATH) is not None or program in {
        "systemctl"  # a server's, not this machine's
    }


def test_the_manual_gives_commands_at_all():
    programs = {command.program for command in docs_commands()}
    assert {"scripts/start", "scripts/manage", "python3", ".venv/bin/python", "curl"} <= programs


def test_every_command_in_the_manual_names_a_program_a_new_terminal_has():
    missing = [c for c in docs_commands() if not _found_in_new_terminal(c.program)]
    assert missing == []


class Probes(NamedTuple):
    runs: list[list[str]]  # each run as written, or with --help
    manage_commands: set[str]  # the management commands given to scripts/manage


def _probes() -> Probes:
    """What to run: the cheap commands as written, one --help for each other program
    of the checkout; the management commands scripts/manage is given are looked up in
    its list (one start of Django, not one each: 16 of them took 90 s of 180)."""
    probes: dict[str, list[str]] = {}
    manage_commands: set[str] = set()
    for command in docs_commands():
        words = command.words
        if command.program == "python3" and words[1:2] == ["-c"]:
            probes[command.line] = ["bash", "--norc", "-c", command.line]
        elif command.program == "scripts/manage" and len(words) > 1:
            manage_commands.add(words[1])
        elif command.program == ".venv/bin/python" and len(words) > 1:
            # The module (-m pytest) or the script, with manage.py's command.
            if words[1] == "-m":
                script = words[1:3]
            elif any(word.endswith(".py") for word in words):
                first = next(i for i, word in enumerate(words) if word.endswith(".py"))
                script = words[first : first + (2 if words[first] == "manage.py" else 1)]
            else:  # interpreter options only (-X importtime)
                probes.setdefault(command.line, [*words, "-c", "pass"])
                continue
            probes.setdefault(" ".join(script), [words[0], *script, "--help"])
        elif command.program.startswith(".venv/bin/") and command.program not in probes:
            probes[command.program] = [command.program, "--help"]
    return Probes(list(probes.values()), manage_commands)


@pytest.mark.processes
def test_the_manual_s_commands_run_in_a_new_terminal(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text(
        f"SECRET_KEY={'k' * 60}\nDATABASE_URL=sqlite:///{tmp_path / 'db.sqlite3'}\n"
    )
    environment = {
        "PATH": NEW_TERMINAL_PATH,
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "ENV_FILE": str(env_file),
    }
    probes = _probes()
    assert "runscheduler" in probes.manage_commands
    assert any(probe[0] == "bash" for probe in probes.runs)

    def run(probe: list[str], extra: dict[str, str]) -> subprocess.CompletedProcess:
        return subprocess.run(
            probe,
            cwd=ROOT,
            env=environment | extra,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    listed = run(["scripts/manage", "help", "--commands"], NEEDS["run_huey"])
    assert listed.returncode == 0, listed.stderr[-500:]
    assert probes.manage_commands - set(listed.stdout.split()) == set()
    # Three at a time: each waits mostly on an interpreter starting.
    runs = [probe for probe in probes.runs if probe[0] not in HEAVY]
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = list(pool.map(lambda probe: run(probe, NEEDS.get(probe[-2], {})), runs))
    failed = [
        (probe, d.returncode, d.stderr[-500:])
        for probe, d in zip(runs, done, strict=True)
        if d.returncode
    ]
    assert failed == []
    for program in HEAVY:
        assert os.access(ROOT / program, os.X_OK), program
