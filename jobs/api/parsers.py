"""The API's request parser: DRF's JSON parser, bounded in depth."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

# A job is an object of strings, numbers and short lists: two or three levels. Anything
# much deeper is not a job, and json would recurse through it on the C stack.
MAX_DEPTH = 32


def depth(value: Any) -> int:
    """How deeply lists and objects nest in `value` (a scalar is 0), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


class JSONParser(parsers.JSONParser):
    """A body nested more than MAX_DEPTH levels is a 400 (ParseError), as is one too deep
    for json itself (a RecursionError, which DRF would let through as a 500)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested more than {MAX_DEPTH} levels") from None
        if depth(data) > MAX_DEPTH:
            raise ParseError(f"JSON parse error - nested more than {MAX_DEPTH} levels")
        return data
