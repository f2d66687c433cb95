"""The registry of Python tasks: registering, finding, describing, binding arguments."""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import IntegrityError, transaction
from django.test import override_settings

from jobs.bench.data import insert_interval_jobs
from jobs.models import Job
from jobs.pytasks import registry, signature
from jobs.pytasks.registry import get_task, registered_tasks
from jobs.pytasks.signature import REQUIRED, ArgumentsError, bind_arguments
from jobs.tests import sample_tasks


def test_from_jobs_import_register_in_both_forms():
    from jobs import register

    def plain(a: int) -> int:
        return a

    def named(b: str = "x") -> str:
        """Named one."""
        return b

    try:
        assert register(plain) is plain
        assert register(name="tests.named", description="Chosen words")(named) is named
        assert get_task(f"{__name__}.test_from_jobs_import_register_in_both_forms.<locals>.plain")
        task = get_task("tests.named")
        assert task.description == "Chosen words"
        assert task.function is named
    finally:
        registry.unregister(
            f"{__name__}.test_from_jobs_import_register_in_both_forms.<locals>.plain"
        )
        registry.unregister("tests.named")


def test_registered_tasks_are_sorted_and_include_the_examples_and_the_test_tasks():
    names = [task.name for task in registered_tasks()]
    assert names == sorted(names)
    assert "jobs.example_tasks.say_hello" in names
    assert "jobs.tests.sample_tasks.send_invoices" in names
    assert "samples.typed" in names


def test_a_task_is_described_from_its_signature_and_docstring():
    task = get_task("jobs.tests.sample_tasks.send_invoices")
    assert task.description == "Send the day's invoices."
    assert task.signature_text == "send_invoices(day: str = 'today')"
    (day,) = task.parameters
    assert day == signature.TaskParameter(
        name="day",
        kind="str",
        default="today",
        required=False,
        choices=(),
        annotation_text="str",
        nullable=False,
        value_type=str,
    )


def test_parameter_kinds_follow_the_annotations():
    task = get_task("samples.typed")
    kinds = {p.name: (p.kind, p.required, p.choices, p.annotation_text) for p in task.parameters}
    assert kinds["count"] == ("int", True, (), "int")
    assert kinds["ratio"][0] == "float"
    assert kinds["flag"][0] == "bool"
    assert kinds["label"][0] == "str"
    assert kinds["day"] == ("date", False, (), "date | None")
    assert kinds["at"][0] == "datetime"
    assert kinds["colour"] == ("choice", False, ("red", "green"), "Colour")
    assert kinds["mode"] == ("choice", False, ("fast", "slow"), "Literal['fast', 'slow']")
    assert kinds["items"] == ("json", False, (), "list[int] | None")
    assert kinds["options"][0] == "json"
    assert kinds["anything"] == ("json", False, (), "")
    count = task.parameters[0]
    assert count.default is REQUIRED and not REQUIRED
    assert "colour: Colour = Colour.RED" in task.signature_text
    assert "anything=None" in task.signature_text


def test_arguments_are_read_from_their_json_form():
    task = get_task("samples.typed")
    bound = bind_arguments(
        task,
        {
            "count": "12",
            "ratio": 2,
            "flag": True,
            "day": "2026-12-01",
            "at": "2026-12-01T09:30:00Z",
            "colour": "green",
            "mode": "slow",
            "items": [1, 2],
            "options": {"a": 1},
            "anything": [None, "x"],
        },
    )
    values = bound.arguments
    assert values["count"] == 12
    assert values["ratio"] == 2.0 and isinstance(values["ratio"], float)
    assert values["day"] == date(2026, 12, 1)
    assert values["at"] == datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    assert values["colour"] is sample_tasks.Colour.GREEN
    assert values["mode"] == "slow"
    assert values["items"] == [1, 2]
    assert signature.normalize(task, {"count": "12", "day": "2026-12-01", "colour": "green"}) == {
        "count": 12,
        "day": "2026-12-01",
        "colour": "green",
    }


def test_a_naive_datetime_is_read_in_the_sites_time_zone():
    task = get_task("samples.typed")
    with override_settings(TIME_ZONE="Asia/Tokyo"):
        at = bind_arguments(task, {"count": 1, "at": "2026-12-01T09:00:00"}).arguments["at"]
    assert at == datetime(2026, 12, 1, 0, 0, tzinfo=UTC)


def test_every_problem_is_reported_by_parameter():
    task = get_task("samples.typed")
    with pytest.raises(ArgumentsError) as caught:
        bind_arguments(
            task,
            {
                "ratio": "fast",
                "flag": "maybe",
                "label": 5,
                "day": "2026-13-45",
                "at": "soon",
                "colour": "blue",
                "mode": "medium",
                "items": {"not": "a list"},
                "options": [1],
                "surprise": 1,
            },
        )
    errors = caught.value.errors
    assert set(errors) == {
        "count",
        "ratio",
        "flag",
        "label",
        "day",
        "at",
        "colour",
        "mode",
        "items",
        "options",
        "surprise",
    }
    assert errors["count"] == ["This argument is required."]
    assert "takes no argument" in errors["surprise"][0]
    assert "red" in errors["colour"][0] and "green" in errors["colour"][0]


@pytest.mark.parametrize(
    ("value", "accepted"),
    [(1, True), (True, False), (1.5, False), (1.0, True), ("x", False), (None, False)],
)
def test_an_int_parameter_takes_whole_numbers_only(value, accepted):
    task = get_task("samples.typed")
    if accepted:
        assert bind_arguments(task, {"count": value}).arguments["count"] == 1
    else:
        with pytest.raises(ArgumentsError) as caught:
            bind_arguments(task, {"count": value})
        assert list(caught.value.errors) == ["count"]


def test_arguments_that_are_not_an_object_are_refused():
    with pytest.raises(ArgumentsError) as caught:
        bind_arguments(get_task("samples.typed"), [1, 2])
    assert list(caught.value.errors) == ["__all__"]


def test_a_task_taking_kwargs_accepts_other_names():
    task = get_task("jobs.tests.sample_tasks.accepts_anything")
    bound = bind_arguments(task, {"first": 1, "second": "two"})
    assert task.call(bound) == {"first": 1, "second": "two"}
    assert signature.normalize(task, {"first": "1", "second": "two"}) == {
        "first": 1,
        "second": "two",
    }


def test_a_dotted_path_to_anything_else_is_never_imported():
    assert "jobs.tests.unimported" not in sys.modules
    assert get_task("jobs.tests.unimported.boom") is None
    assert get_task("os.system") is None
    assert get_task("jobs.tests.sample_tasks.not_registered") is None
    assert "jobs.tests.unimported" not in sys.modules


def test_a_second_function_under_a_taken_name_is_refused():
    def other() -> None:
        pass

    with pytest.raises(ValueError, match="already registered"):
        registry.register(name="jobs.tests.sample_tasks.send_invoices")(other)
    assert get_task("jobs.tests.sample_tasks.send_invoices").function is sample_tasks.send_invoices


def test_discovery_imports_app_tasks_modules_and_the_setting_and_survives_a_broken_one(caplog):
    # The Huey glue is not a task module: JobsConfig.ready() imports it where Huey is.
    assert not [name for name in registry.task_modules() if name.startswith("jobs.huey")]
    try:
        with override_settings(
            JOBS_TASK_MODULES=["jobs.tests.sample_tasks", "jobs.tests.no_such_module"]
        ):
            registry.discover(force=True)
            problems = registry.discovery_problems()
        assert len(problems) == 1 and "jobs.tests.no_such_module" in problems[0]
        assert get_task("jobs.tests.sample_tasks.send_invoices") is not None
    finally:
        registry.discover(force=True)
    assert registry.discovery_problems() == []
    # The Huey glue still works after discovery ran again.
    from jobs.huey import tasks

    assert tasks.execute_runs.name == "jobs.execute_runs"


django_task_module = getattr(sample_tasks, "django_native", None)


@pytest.mark.skipif(
    django_task_module is None, reason="needs django.tasks (Django 6) or the django-tasks backport"
)
def test_a_django_task_in_a_task_module_is_accepted_and_run_with_call():
    task = get_task("jobs.tests.sample_tasks.django_native")
    assert task is not None
    assert signature.is_django_task(task.target)
    assert task.signature_text == "django_native(amount: int, note: str = '')"
    sample_tasks.calls.pop("django_native", None)
    assert task.call(bind_arguments(task, {"amount": "21"})) == 42
    assert sample_tasks.calls["django_native"] == [{"amount": 21, "note": ""}]


@pytest.mark.django_db
def test_raw_sql_inserted_jobs_are_simulated_with_no_arguments():
    insert_interval_jobs(3, datetime(2030, 1, 1, tzinfo=UTC), timedelta(hours=1))
    assert {(job.executor, str(job.arguments)) for job in Job.objects.all()} == {
        ("simulated", "{}")
    }
    job = Job.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Job.objects.filter(pk=job.pk).update(executor="rocket")
