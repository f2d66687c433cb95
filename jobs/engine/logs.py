"""Run logs made safe for every database before they are written.

An executor may return anything in its log: PostgreSQL's text columns refuse NUL
characters (the whole batch of finished runs failed with them), and a lone surrogate
cannot be encoded as UTF-8 at all. Both are replaced here, whatever the executor.
"""

from __future__ import annotations

REPLACEMENT = "\ufffd"


def safe_log(log: object) -> str:
    """`log` as text any database stores: NUL removed, invalid UTF-8 and lone
    surrogates replaced with U+FFFD. Costs one scan of the text when it is clean."""
    if isinstance(log, bytes | bytearray):
        log = bytes(log).decode("utf-8", "replace")
    elif not isinstance(log, str):
        log = str(log)
    if "\x00" in log:
        log = log.replace("\x00", "")
    if log.isascii():
        return log
    try:
        log.encode("utf-8")
    except UnicodeEncodeError:
        # Valid surrogate pairs become their character, lone surrogates U+FFFD.
        log = log.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return log
