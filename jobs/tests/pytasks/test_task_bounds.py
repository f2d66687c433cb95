"""Bounded task arguments: `Annotated[int, Between(low, high)]` refuses a number out of
bounds at the field (the model, the API's create and run now, the form's field), and the
shipped example `say_hello(times=...)` is bounded so that it cannot hold a worker for ever."""

from __future__ import annotations

from typing import Annotated

import pytest
from django.core.exceptions import ValidationError

from jobs.access.permissions import JOB_ADMINS
from jobs.models import Job, JobHistory
from jobs.pytasks import registry, signature
from jobs.pytasks.registry import Between
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import make_job, make_user
from jobs.web.arguments import parameter_field

pytestmark = pytest.mark.django_db

HELLO = "jobs.example_tasks.say_hello"
TOO_MANY = 10**30


def test_the_example_greets_at_most_a_thousand_times():
    task = registry.get_task(HELLO)
    for times in (1, 1000):
        assert signature.bind_arguments(task, {"times": times}).arguments == {"times": times}
    for times in (0, -1, 1001, TOO_MANY, "1001"):
        with pytest.raises(signature.ArgumentsError) as refused:
            signature.bind_arguments(task, {"times": times})
        assert refused.value.errors == {"times": ["Enter a number from 1 to 1000."]}


def test_bounds_keep_the_signature_as_written_and_check_floats_and_one_sided_bounds():
    def spread(
        share: Annotated[float, Between(0.0, 1.0)] = 0.5,
        least: Annotated[int, Between(minimum=10)] = 10,
    ) -> None: ...

    task = signature.describe(spread, "tests.spread")
    assert task.signature_text == "spread(share: float = 0.5, least: int = 10)"
    with pytest.raises(signature.ArgumentsError) as refused:
        signature.bind_arguments(task, {"share": 1.5, "least": 9})
    assert refused.value.errors == {
        "share": ["Enter a number from 0.0 to 1.0."],
        "least": ["Enter a number of at least 10."],
    }
    assert signature.bind_arguments(task, {"share": 1, "least": 10**6}).arguments["least"] == 10**6


def test_a_job_with_an_argument_out_of_bounds_is_refused_at_the_field():
    with pytest.raises(ValidationError) as refused:
        make_job(executor="python", command=HELLO, arguments={"times": TOO_MANY}, clean=True)
    assert "times: Enter a number from 1 to 1000." in str(refused.value.message_dict["arguments"])
    assert not Job.objects.exists()


def test_the_api_refuses_an_argument_out_of_bounds_and_saves_nothing():
    client = token_client(make_user("jobadmin", JOB_ADMINS))
    values = {
        "name": "greeter",
        "command": HELLO,
        "executor": "python",
        "arguments": {"times": TOO_MANY},
        "schedule_type": "interval",
        "interval": 10,
        "interval_unit": "minute",
    }
    response = client.post("/api/v1/jobs/", values, format="json")
    assert response.status_code == 400
    assert "Enter a number from 1 to 1000." in str(response.json()["arguments"])
    assert not Job.objects.exists()
    job = make_job(executor="python", command=HELLO, arguments={"times": 2})
    response = client.post(
        f"/api/v1/jobs/{job.pk}/run/", {"arguments": {"times": TOO_MANY}}, format="json"
    )
    assert response.status_code == 400
    assert not JobHistory.objects.exists()


def test_the_forms_number_field_has_the_bounds():
    times = next(p for p in registry.get_task(HELLO).parameters if p.name == "times")
    field = parameter_field(times, {})
    assert (field.min_value, field.max_value) == (1, 1000)
    assert field.widget.attrs["min"] == 1 and field.widget.attrs["max"] == 1000
    with pytest.raises(ValidationError):
        field.clean("1001")
