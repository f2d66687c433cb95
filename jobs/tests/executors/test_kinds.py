"""One row per kind of job (jobs/kinds.py), and everything reads it: the
choices of Job.executor, the routing of runs, the rules, the form sections and labels,
the permission rule."""

from __future__ import annotations

import pytest

from jobs import kinds
from jobs.executors.routing import EXECUTOR_CLASSES
from jobs.models import ExecutorKind
from jobs.web import arguments
from jobs.web.forms import offered_executors


def test_the_choices_of_a_jobs_executor_are_the_rows():
    assert ExecutorKind.choices == [(kind.value, kind.label) for kind in kinds.KINDS]
    assert ExecutorKind.SHELL == "shell" and ExecutorKind.SIMULATED.label == "Simulated"


def test_runs_are_routed_to_each_rows_class():
    assert {
        kind.value: kind.executor for kind in kinds.KINDS if kind.value != "simulated"
    } == EXECUTOR_CLASSES


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda kind: kind.value)
def test_every_name_a_row_gives_is_there(kind: kinds.Kind):
    for path in (
        kind.executor,
        kind.rules,
        kind.problem,
        kind.section,
        kind.switched_on,
        kind.needs_use_shell,
    ):
        if path:
            assert callable(kinds.load(path)), path
    if kind.section:
        assert hasattr(kinds.load(kind.section), "for_job")


def test_the_command_labels_come_from_the_rows():
    assert arguments.COMMAND_LABELS["command"] == "Management command line"
    assert arguments.COMMAND_LABELS["http"] == "URL"
    assert "python" not in arguments.COMMAND_LABELS  # its task has a field of its own


def test_the_permission_rule_is_each_kinds(settings):
    assert kinds.needs_use_shell("shell", "echo hi")
    assert kinds.needs_use_shell("command", '"dumpdata" auth.user')
    assert not kinds.needs_use_shell("command", "  clearsessions")
    assert not kinds.needs_use_shell("http", "https://example.com/")
    assert not kinds.needs_use_shell("python", "shell")
    assert not kinds.needs_use_shell("rocket", "dumpdata")  # refused as unknown anyway


def test_the_offered_kinds_follow_the_rows_switches(settings):
    class Plain:
        def has_perm(self, name: str) -> bool:
            return False

    class Sheller(Plain):
        def has_perm(self, name: str) -> bool:
            return name == "jobs.use_shell"

    settings.JOBS_SHELL_ENABLED = True
    assert "shell" not in dict(offered_executors(Plain()))
    assert "shell" in dict(offered_executors(Plain(), current="shell"))
    assert "shell" in dict(offered_executors(Sheller()))
    settings.JOBS_SHELL_ENABLED = False
    assert "shell" not in dict(offered_executors(Sheller()))
    # Celery is installed here (requirements-dev.txt): its kind is offered.
    assert list(dict(offered_executors(Plain()))) == [
        "simulated",
        "python",
        "command",
        "http",
        "celery",
    ]
