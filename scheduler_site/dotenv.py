"""The checkout's own settings file, `.env`: NAME=value lines the settings read.

scripts/start writes it once (the generated SECRET_KEY, owner-only), so that a command
typed later in a new terminal (`scripts/manage apitoken admin`) uses the same settings
as the site. A variable set in the environment always wins over the file, so production,
which sets its variables itself, behaves as without it.

The format is the common subset: `NAME=value`, blank lines and `#` comments, an optional
`export ` before the name, and a value in matching single or double quotes taken as it
is (no escapes, no variables). Anything else stops the start with the file and line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# Larger than any real settings file; a bigger one is a mistake (a database dump named .env).
MAX_BYTES = 64 * 1024
_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)")


def parse(text: str, source: str = ".env") -> dict[str, str]:
    """The NAME=value pairs of `text`; ImproperlyConfigured names `source` and the line."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise ImproperlyConfigured(f"{source}, line {number}: expected NAME=value")
        name, value = match[1], match[2].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif value[:1] in ("'", '"'):
            raise ImproperlyConfigured(f"{source}, line {number}: the quote is not closed")
        if name in values:
            raise ImproperlyConfigured(f"{source}, line {number}: {name} is set twice")
        if "\x00" in value:
            raise ImproperlyConfigured(f"{source}, line {number}: {name} has a NUL byte")
        values[name] = value
    return values


def env_file_path(default: Path) -> Path | None:
    """The file to read: ENV_FILE when set (empty: none), else `default`."""
    named = os.environ.get("ENV_FILE")
    if named is None:
        return default
    return Path(named) if named.strip() else None


def load(default: Path) -> dict[str, str]:
    """Put the file's variables into os.environ where the environment has none; returns
    those it set. A missing default file is no error; a missing ENV_FILE is."""
    path = env_file_path(default)
    if path is None:
        return {}
    try:
        with path.open("rb") as file:
            data = file.read(MAX_BYTES + 1)
    except FileNotFoundError:
        if "ENV_FILE" in os.environ:
            raise ImproperlyConfigured(
                f"ENV_FILE names {str(path)!r}, which does not exist"
            ) from None
        return {}
    except OSError as exc:
        raise ImproperlyConfigured(f"cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_BYTES:
        raise ImproperlyConfigured(f"{path} is larger than {MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImproperlyConfigured(f"{path} is not UTF-8 text") from None
    added = {
        name: value for name, value in parse(text, str(path)).items() if name not in os.environ
    }
    os.environ.update(added)
    return added
