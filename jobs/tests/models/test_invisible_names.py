"""A job's name holds no invisible character: two names that differ by a zero-width space
or a soft hyphen look the same in every list, alert and log. Job.clean() refuses them, so
the dashboard, the admin, the API and syncjobs all do, with one message, saving nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from jobs import text
from jobs.models import Job
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.declaring import syncjobs
from jobs.tests.forms import admin_form, dashboard_form

pytestmark = pytest.mark.django_db

# Each shows as nothing (or as a plain space or line break) in a list of names.
INVISIBLE = [
    "\u200b",  # zero-width space (Cf)
    "\u200d",  # zero-width joiner (Cf)
    "\ufeff",  # byte-order mark (Cf)
    "\u00ad",  # soft hyphen (Cf)
    "\u2060",  # word joiner (Cf)
    "\u180e",  # Mongolian vowel separator (Cf)
    "\U000e0001",  # language tag (Cf)
    "\u2028",  # line separator (Zl)
    "\u2029",  # paragraph separator (Zp)
    "\u034f",  # combining grapheme joiner
    "\u3164",  # Hangul filler
]
SAYS = "invisible formatting characters"


@pytest.fixture
def root():  # type: ignore[no-untyped-def]
    return personas.superuser()


signed_in = personas.signed_in


@pytest.mark.parametrize("char", INVISIBLE)
def test_the_model_refuses_an_invisible_character_in_a_name_naming_it(char):
    job = Job(name=f"back{char}up", command="echo", interval=5, interval_unit="minute")
    with pytest.raises(Exception) as refused:
        job.full_clean()
    [message] = refused.value.message_dict["name"]
    assert text.code_point(char) in message and SAYS in message


@pytest.mark.parametrize("char", INVISIBLE)
def test_the_dashboard_form_refuses_it(root, char):
    response = signed_in(root).post("/jobs/new/", dashboard_form(name=f"back{char}up"))
    assert response.status_code == 200
    assert text.code_point(char) in response.context["form"].errors["name"][0]
    assert not Job.objects.exists()


@pytest.mark.parametrize("char", INVISIBLE)
def test_the_admin_refuses_it(root, char):
    response = signed_in(root).post(reverse("admin:jobs_job_add"), admin_form(name=f"back{char}up"))
    assert response.status_code == 200
    assert text.code_point(char) in str(response.context["adminform"].form.errors["name"])
    assert not Job.objects.exists()


@pytest.mark.parametrize("char", INVISIBLE)
def test_the_api_refuses_it_on_create_and_on_change(root, char):
    api = token_client(root)
    body = {"name": f"back{char}up", "command": "echo", "interval": 5, "interval_unit": "minute"}
    created = api.post("/api/v1/jobs/", body, format="json")
    assert created.status_code == 400
    assert text.code_point(char) in created.json()["name"][0]
    assert not Job.objects.exists()

    job = Job.objects.create(name="backup", command="echo", interval=5, interval_unit="minute")
    changed = api.patch(f"/api/v1/jobs/{job.pk}/", {"name": f"ba{char}ckup"}, format="json")
    assert changed.status_code == 400
    job.refresh_from_db()
    assert job.name == "backup"


def test_syncjobs_refuses_a_declared_name_with_one_and_changes_nothing(clock, declare):
    # The name of a job in code is its task's name and key: both are refused.
    declare(every=timedelta(minutes=5), key="night\u200bly")
    synced = syncjobs()
    assert synced.status == 2 and "nothing was changed" in synced.output
    assert not Job.objects.exists()


@pytest.mark.parametrize(
    "name", ["Sauvegarde nocturne — café", "夜間バックアップ", "backup v2 (ß)"]
)
def test_names_in_any_script_with_visible_characters_are_accepted(name):
    Job(name=name, command="echo", interval=5, interval_unit="minute").full_clean()
