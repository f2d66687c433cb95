"""Huey messages as JSON instead of pickle.

Huey pickles its messages by default, so whoever can write to the Redis queue can run
any code in every worker that reads it. Here a message is JSON: its task name, run ids
(lists of strings), numbers and times, nothing that turns into code when it is read.
A payload that is not this JSON (a pickle, say) is refused with a ValueError, which the
consumer logs before going on with the next message.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from huey.registry import Message
from huey.serializer import Serializer
from huey.utils import Error

# The key that marks an encoded Python value in the JSON.
TAG = "__huey__"


def _encode(value: Any) -> Any:
    """JSON-ready form of `value`; a type with no JSON form is a TypeError (not sent)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Message):
        return {TAG: "message", "fields": {k: _encode(v) for k, v in value._asdict().items()}}
    if isinstance(value, Error):
        return {TAG: "error", "metadata": _encode(value.metadata)}
    if isinstance(value, datetime):
        return {TAG: "datetime", "value": value.isoformat()}
    if isinstance(value, timedelta):
        return {TAG: "timedelta", "seconds": value.total_seconds()}
    if isinstance(value, list | tuple):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("a Huey message may only hold dictionaries with string keys")
        if TAG in value:
            raise TypeError(f"a Huey message may not hold a dictionary with a {TAG!r} key")
        return {key: _encode(item) for key, item in value.items()}
    raise TypeError(f"a Huey message cannot hold a {type(value).__name__} as JSON")


def _decode(obj: dict[str, Any]) -> Any:
    kind = obj.get(TAG)
    if kind is None:
        return obj
    if kind == "message":
        fields = obj["fields"]
        unknown = set(fields) - set(Message._fields)
        if unknown:
            raise ValueError(f"a Huey message with unknown fields {sorted(unknown)}")
        # Task arguments were a tuple (a pipeline appends to it).
        if isinstance(fields.get("args"), list):
            fields["args"] = tuple(fields["args"])
        return Message(**fields)
    if kind == "error":
        return Error(obj["metadata"])
    if kind == "datetime":
        return datetime.fromisoformat(obj["value"])
    if kind == "timedelta":
        return timedelta(seconds=obj["seconds"])
    raise ValueError(f"a Huey message holds an unknown {TAG} value {kind!r}")


class JSONSerializer(Serializer):
    """Huey's Serializer with JSON in place of pickle (compression still applies)."""

    def _serialize(self, data: Any) -> bytes:
        return json.dumps(_encode(data), separators=(",", ":")).encode()

    def _deserialize(self, data: bytes) -> Any:
        try:
            return json.loads(data, object_hook=_decode)
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"not a JSON Huey message: {exc}") from None
