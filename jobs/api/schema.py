"""Make the OpenAPI schema honest about error answers.

drf-spectacular documents only success responses. Every API operation can also answer
401/403 (authentication and permissions) and 429 (the throttles); writes and those with
query parameters 400 (validation, or an action the job's state refuses, such as enabling
a one-off job whose time has passed); those with an id in the path, a page or a cursor
404. Clients, and the schemathesis test, rely on the schema listing what the server
really says.

The site refuses a NUL character anywhere in a request (jobs.web.middleware): the schema
says so of every text query parameter that states no pattern of its own.
"""

from __future__ import annotations

from typing import Any

# drf-spectacular's settings for this API's schema, applied by its schema view
# (jobs/api/docs.py) over whatever SPECTACULAR_SETTINGS the project has. Paths are
# relative to where the project mounts the API; the view puts the mount point in front.
SCHEMA_SETTINGS: dict[str, Any] = {
    "TITLE": "Job scheduler API",
    # Markdown, as Swagger UI renders it: anything in <angle brackets> goes in `code`,
    # or it is read as an HTML tag and dropped ("apitoken <username>" showed "apitoken").
    "DESCRIPTION": (
        "Jobs, their runs, run now, enable and disable. Authenticate with "
        "`Authorization: Token <key>` (`python manage.py apitoken <username>`) or a "
        'session; each request needs the permission that "Who can do what" '
        "(docs/permissions.md) names (jobs.view_job to read)."
    ),
    "VERSION": "1",
    "SCHEMA_PATH_PREFIX": r"/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "jobs.models.RunStatus",
        "NotificationStatusEnum": "jobs.models.NotificationStatus",
    },
    # GET v1/ also answers at v1/.json (DRF's format suffix): one operation, not two.
    "PREPROCESSING_HOOKS": ["drf_spectacular.hooks.preprocess_exclude_path_format"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "jobs.api.schema.document_error_responses",
        "jobs.api.schema.state_integer_key_limits",
    ],
}

_METHODS = {"get", "put", "patch", "post", "delete"}
_ERROR = {"$ref": "#/components/schemas/Error"}
# Any text without NUL (JSON Schema patterns are not anchored by themselves).
NO_NUL_PATTERN = "^[^\\x00]*$"


def document_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = {
        "type": "object",
        "description": (
            'Either {"detail": "message"} or, for a 400, {"field": ["message", ...]} with '
            '"non_field_errors" for messages about the whole object.'
        ),
        "additionalProperties": {},
    }
    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            if method not in _METHODS:
                continue
            responses = operation.setdefault("responses", {})
            params = operation.get("parameters", [])

            def add(code: str, description: str, responses: dict = responses) -> None:
                responses.setdefault(
                    code,
                    {
                        "description": description,
                        "content": {"application/json": {"schema": _ERROR}},
                    },
                )

            add("401", "Not authenticated.")
            add("403", "Not allowed: writes need a staff user.")
            add("429", "Too many requests (JOBS_API_THROTTLE_ANON, JOBS_API_THROTTLE_USER).")
            writes = method in ("post", "put", "patch")
            if writes or any(p.get("in") == "query" for p in params):
                add("400", "Invalid input: messages per field.")
            if any(p.get("in") == "path" or p.get("name") in ("page", "cursor") for p in params):
                add("404", "No such object, page or cursor.")
            for param in params:
                _refuse_nul(param)
    return result


def _refuse_nul(param: dict[str, Any]) -> None:
    schema = param.get("schema", {})
    # Formats (date-time, uuid) hold no NUL anyway.
    if (
        param.get("in") == "query"
        and schema.get("type") == "string"
        and "pattern" not in schema
        and not schema.get("format")
    ):
        schema["pattern"] = NO_NUL_PATTERN


# A database's integer key (calendars, blackout windows, a job's calendar, team and
# channels): positive,
# and no larger than the largest integer a JSON client holds exactly (an int64 would not).
INTEGER_KEY_RANGE = {"minimum": 1, "maximum": 2**53 - 1}
_INTEGER_KEYS = {"id", "calendar", "team"}
_INTEGER_KEY_LISTS = {"channels"}


def state_integer_key_limits(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Give the integer keys (path parameters and properties named id, calendar or team) the
    range they hold, which drf-spectacular leaves out of a model's automatic key."""

    def bound(node: dict[str, Any]) -> None:
        if node.get("type") == "integer" and "minimum" not in node and "maximum" not in node:
            node.update(INTEGER_KEY_RANGE)

    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            if method not in _METHODS:
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path" and parameter.get("name") in _INTEGER_KEYS:
                    bound(parameter.get("schema", {}))
    for component in result.get("components", {}).get("schemas", {}).values():
        for name, node in component.get("properties", {}).items():
            if name in _INTEGER_KEYS:
                bound(node)
            elif name in _INTEGER_KEY_LISTS:
                bound(node.get("items", {}))
    return result
