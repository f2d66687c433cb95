"""Text that is safe to store, show and put in a header: the few rules, in one place.

Control characters (Unicode category Cc: NUL, CR, ESC, ...) and the bidirectional
overrides and isolates (U+202A-U+202E, U+2066-U+2069) make text lie about itself: a
carriage return rewrites a terminal line or splits a mail header, an ANSI escape
recolours a log, a right-to-left override shows "exe.txt" for "txt.exe". Job fields
refuse them (jobs.models.job_rules); text from elsewhere (a remote server's error) is
cleaned with `clean_remote()` before it is stored or logged.
"""

from __future__ import annotations

import re
import unicodedata

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# The line breaks of a multi-line command.
MULTILINE = "\t\n"

REMOTE_TEXT_MAX_CHARS = 500
ONE_LINE_MAX_CHARS = 200

# ESC sequences: CSI ("ESC [ ... final"), OSC ("ESC ] ... BEL" or "ESC ] ... ESC \"),
# and the two-character ones ("ESC c", "ESC (B", ...). An OSC never closed ends at its
# line's end, so that it cannot take the rest of a log with it.
_ANSI_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)


# What a terminal acts on besides printing, once the escape sequences are gone: the C0
# controls but tab and newline, DEL and the C1 controls.
_TERMINAL_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# Characters that show as nothing, so that two names differing by one look the same:
# the format characters (Cf: zero-width space and joiners, the byte-order mark, the soft
# hyphen, word joiners, tags, the bidi controls), the line and paragraph separators (Zl,
# Zp), and the few other default-ignorable ones (the combining grapheme joiner, the
# Hangul fillers).
INVISIBLE_CATEGORIES = frozenset({"Cf", "Zl", "Zp"})
INVISIBLE_OTHERS = frozenset("\u034f\u115f\u1160\u3164\uffa0")


def is_invisible(char: str) -> bool:
    return (
        is_forbidden(char)
        or char in INVISIBLE_OTHERS
        or unicodedata.category(char) in INVISIBLE_CATEGORIES
    )


def invisible_character(text: str) -> str | None:
    """The first control, format or other invisible character in `text`, or None: what
    a name must not hold."""
    for char in text or "":
        if is_invisible(char):
            return char
    return None


def is_forbidden(char: str) -> bool:
    return char in BIDI_CONTROLS or unicodedata.category(char) == "Cc"


def forbidden_character(text: str, allowed: str = "") -> str | None:
    """The first control character or bidi override in `text` not in `allowed`, or None."""
    for char in text or "":
        if char not in allowed and is_forbidden(char):
            return char
    return None


def code_point(char: str) -> str:
    """ "\\r" -> "U+000D": how a message names an invisible character."""
    return f"U+{ord(char):04X}"


def normalize_newlines(text: str) -> str:
    """CR LF (what browsers send for a textarea's line breaks) as LF."""
    return text.replace("\r\n", "\n") if text else text


def one_line(text: str, limit: int = ONE_LINE_MAX_CHARS) -> str:
    """The text as one line, for a mail subject: every run of white space, line breaks
    included (CR, LF, VT, FF, U+0085, U+2028, ...), becomes one space; other control
    characters and bidi overrides are dropped."""
    words = " ".join((text or "").split())
    return "".join(char for char in words if not is_forbidden(char))[:limit]


def clean_remote(text: str, limit: int = REMOTE_TEXT_MAX_CHARS) -> str:
    """Text a remote server chose (an HTTP reason phrase, an exception's message) as
    one printable line: ANSI escapes removed, other non-printable characters shown as
    spaces, white space collapsed, at most `limit` characters."""
    text = _ANSI_ESCAPE.sub("", str(text or ""))
    printable = "".join(char if char.isprintable() else " " for char in text)
    line = " ".join(printable.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def clean_output(text: str) -> str:
    """What a run printed, as its log keeps it: escape sequences removed, CR LF and a bare
    CR as a newline (a bare CR would rewrite the line it ends on a terminal, hiding what
    came before), the other control characters dropped; newlines and tabs kept. Never
    longer than `text`. Costs one scan when the text is clean."""
    if not _TERMINAL_CONTROL.search(text):
        return text
    text = _ANSI_ESCAPE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _TERMINAL_CONTROL.sub("", text)
