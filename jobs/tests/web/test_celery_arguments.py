"""A celery job's arguments on every entry point: the job form and "run now" typed from
the task's signature when this process has the task (jobs/tests/celery_tasks.py), two
JSON boxes otherwise; and arguments that are no JSON, or do not fit, refused with a
clear message by the form, the admin, the API and the model, nothing saved."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from jobs.models import Job, JobHistory
from jobs.tests.api_helpers import make_user, token_client
from jobs.tests.factories import make_job
from jobs.tests.forms import admin_form, dashboard_form

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

APP = "jobs.tests.celery_tasks.app"
ADD = "jobs_tests.add"  # add(x: int, y: int = 1), registered in APP
ELSEWHERE = "billing.tasks.send_invoices"  # only the workers have it


@pytest.fixture(autouse=True)
def celery_app(settings):  # type: ignore[no-untyped-def]
    settings.JOBS_CELERY_APP = APP


def celery_form(command: str = ELSEWHERE, **fields: Any) -> dict[str, Any]:
    return dashboard_form(executor="celery", command=command, **fields)


def errors_of(response: Any, form: str = "form") -> dict[str, list[str]]:
    return {name: list(messages) for name, messages in response.context[form].errors.items()}


# --- a task this process has: its signature's fields -------------------------------------


def test_run_now_of_a_known_task_offers_its_parameters_typed(signed_in: Client) -> None:
    job = make_job(executor="celery", command=ADD, arguments={"args": [2]})
    page = signed_in.get(f"/jobs/{job.pk}/")
    form = page.context["run_form"]
    assert set(form.fields) >= {"celery-arg-x", "celery-arg-y"}
    assert form["celery-arg-x"].value() == 2  # the stored positional argument, by name
    response = signed_in.post(
        f"/jobs/{job.pk}/run/", {"with_arguments": "1", "celery-arg-x": "3", "celery-arg-y": "4"}
    )
    assert response.status_code == 302
    assert JobHistory.objects.get().arguments == {"kwargs": {"x": 3, "y": 4}}


def test_run_now_refuses_a_value_of_the_wrong_type_at_its_field(signed_in: Client) -> None:
    job = make_job(executor="celery", command=ADD, arguments={"args": [2]})
    response = signed_in.post(
        f"/jobs/{job.pk}/run/", {"with_arguments": "1", "celery-arg-x": "two"}
    )
    assert response.status_code == 400
    assert "whole number" in " ".join(errors_of(response, "run_form")["celery-arg-x"])
    assert not JobHistory.objects.exists()


def test_the_job_form_of_a_known_task_is_typed_and_saves_kwargs(signed_in: Client) -> None:
    job = make_job(executor="celery", command=ADD, arguments={"kwargs": {"x": 1}})
    form = signed_in.get(f"/jobs/{job.pk}/edit/").context["form"]
    assert form["celery-arg-x"].value() == 1
    assert "celery_args" not in form.fields
    response = signed_in.post(
        f"/jobs/{job.pk}/edit/", celery_form(ADD, **{"celery-arg-x": "5", "celery-arg-y": "6"})
    )
    assert response.status_code == 302, errors_of(response)
    job.refresh_from_db()
    assert job.arguments == {"kwargs": {"x": 5, "y": 6}}


# --- a task only the workers have: JSON, checked ------------------------------------------


def test_a_new_celery_job_is_saved_with_its_json_arguments(signed_in: Client) -> None:
    response = signed_in.post(
        "/jobs/new/", celery_form(celery_args='[1, "fr"]', celery_kwargs='{"day": "mon"}')
    )
    assert response.status_code == 302, errors_of(response)
    job = Job.objects.get()
    assert (job.executor, job.command) == ("celery", ELSEWHERE)
    assert job.arguments == {"args": [1, "fr"], "kwargs": {"day": "mon"}}
    form = signed_in.get(f"/jobs/{job.pk}/edit/").context["form"]
    assert form["celery_args"].value() == '[1, "fr"]'


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        pytest.param({"celery_args": "[1,"}, "celery_args", "valid JSON", id="broken JSON"),
        pytest.param({"celery_args": '{"a": 1}'}, "celery_args", "JSON list", id="args object"),
        pytest.param({"celery_kwargs": "[1]"}, "celery_kwargs", "JSON object", id="kwargs list"),
        pytest.param({"celery_args": "NaN"}, "celery_args", "JSON list", id="not a list"),
        pytest.param({"command": "no spaces allowed"}, "command", "dotted name", id="name"),
        pytest.param({"command": ""}, "command", "required", id="no name"),
    ],
)
def test_bad_arguments_are_refused_at_their_field_and_nothing_is_saved(
    signed_in: Client, fields: dict, field: str, message: str
) -> None:
    response = signed_in.post("/jobs/new/", celery_form(**fields))
    assert response.status_code == 200
    assert message in " ".join(errors_of(response)[field])
    assert not Job.objects.exists()


def test_the_model_refuses_values_json_cannot_carry_and_arguments_that_do_not_fit() -> None:
    def problems(command: str, arguments: Any) -> str:
        job = Job(
            name="j", executor="celery", command=command, arguments=arguments,
            schedule_type="interval", interval=5, interval_unit="minute",
        )  # fmt: skip
        with pytest.raises(ValidationError) as refused:
            job.full_clean()
        return " ".join(refused.value.message_dict["arguments"])

    assert "only JSON values" in problems(ELSEWHERE, {"args": [datetime.now(UTC)]})
    assert "only JSON values" in problems(ELSEWHERE, {"kwargs": {"n": float("nan")}})
    assert "args, a list" in problems(ELSEWHERE, {"queue": "x"})
    # A task this process has: checked against its signature.
    assert "do not fit add(x: int, y: int = 1)" in problems(ADD, {"args": [1, 2, 3]})
    assert "x:" in problems(ADD, {"kwargs": {"x": "seven"}})


def test_the_api_refuses_bad_arguments_with_the_same_messages() -> None:
    staff = token_client(make_user("ops", staff=True))
    job = {
        "name": "celery job",
        "executor": "celery",
        "command": ELSEWHERE,
        "schedule_type": "interval",
        "interval": 5,
        "interval_unit": "minute",
    }
    refused = staff.post("/api/v1/jobs/", {**job, "arguments": {"args": "x"}}, format="json")
    assert refused.status_code == 400
    assert "args: a JSON list" in " ".join(refused.json()["arguments"])
    assert not Job.objects.exists()
    created = staff.post("/api/v1/jobs/", {**job, "arguments": {"args": [1]}}, format="json")
    assert created.status_code == 201, created.json()
    assert Job.objects.get().arguments == {"args": [1]}


def test_the_admin_refuses_bad_arguments_with_the_same_messages(admin_client: Client) -> None:
    data = admin_form(executor="celery", command=ELSEWHERE, arguments='{"kwargs": [1]}')
    response = admin_client.post("/admin/jobs/job/add/", data)
    assert response.status_code == 200
    assert "kwargs: a JSON object" in response.text
    assert not Job.objects.exists()
