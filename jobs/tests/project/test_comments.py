"""Comments that name an index name one that exists.

A comment saying "index jobs_run_x serves this" is a claim about the query plan; when
the index does not exist the claim misleads whoever tunes the query next. Every name
in a comment or string of the code (jobs/, not its migrations or tests) that looks
like an index must be an index, a constraint or a table of the models.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest
from django.apps import apps

pytestmark = pytest.mark.once  # the same on every database and Django (pytest.ini)

JOBS = Path(__file__).resolve().parents[2]
# Every index and constraint of the models is named with one of these prefixes (the
# test below holds them to it), so a name with one of them is index-looking.
PREFIXES = (
    "jobs_job_",
    "jobs_run_",
    "jobs_notify_",
    "jobs_scheduler_",
    "jobs_change_",
    "jobs_token_",
)
NAME = re.compile(r"\bjobs_[a-z_]+\b")
# Names with those prefixes that are not about the database: Prometheus metrics (whose
# names end in a unit or _total, or are a gauge named for its state) and admin URL
# names (<app>_<model>_<view>).
NOT_AN_INDEX = re.compile(
    r"_(total|seconds)$|^jobs_scheduler_paused$|^jobs_scheduler_python_tasks_running_after_stop$"
    r"|^jobs_[a-z]+_(add|change|changelist|delete|history)$"
)


def model_names() -> tuple[set[str], set[str]]:
    """(index and constraint names, table names) of the jobs app's models."""
    indexes: set[str] = set()
    tables: set[str] = set()
    for model in apps.get_app_config("jobs").get_models():
        tables.add(model._meta.db_table)
        indexes.update(index.name for index in model._meta.indexes)
        indexes.update(constraint.name for constraint in model._meta.constraints)
    return indexes, tables


def texts(path: Path) -> list[str]:
    """The comments and strings of a Python file; all of an SQL file."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".sql":
        return [source]
    kinds = {tokenize.COMMENT, tokenize.STRING}
    if hasattr(tokenize, "FSTRING_MIDDLE"):  # Python 3.12+: f-strings come in parts
        kinds.add(tokenize.FSTRING_MIDDLE)
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [token.string for token in tokens if token.type in kinds]


def code_files() -> list[Path]:
    skipped = {"migrations", "tests"}
    return sorted(
        path
        for suffix in ("*.py", "*.sql")
        for path in JOBS.rglob(suffix)
        if not skipped & set(path.relative_to(JOBS).parts)
    )


def test_the_models_name_their_indexes_and_constraints_with_the_known_prefixes() -> None:
    indexes, tables = model_names()
    assert indexes
    assert {name for name in indexes if not name.startswith(PREFIXES)} == set()
    assert {"jobs_job", "jobs_jobhistory", "jobs_notificationattempt"} <= tables


def test_every_index_named_in_the_code_exists() -> None:
    indexes, tables = model_names()
    files = code_files()
    assert files
    unknown: dict[str, set[str]] = {}
    for path in files:
        for text in texts(path):
            for name in NAME.findall(text):
                if not name.startswith(PREFIXES) or NOT_AN_INDEX.search(name):
                    continue
                if name not in indexes and name not in tables:
                    unknown.setdefault(name, set()).add(str(path.relative_to(JOBS)))
    assert unknown == {}, f"no index or table has these names: {unknown}"
