"""Requests meant to break things answer 4xx, never 500; Huey reads no pickles; the
start script keeps its secrets to their owner."""

from __future__ import annotations

import json
import pickle
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from huey.contrib.djhuey import HUEY
from huey.registry import Message
from rest_framework.test import APIClient

from jobs.api.parsers import MAX_DEPTH, depth
from jobs.huey.serializer import JSONSerializer
from jobs.huey.tasks import execute_runs, scheduler_pass
from jobs.tests.api_helpers import make_user
from jobs.tests.processes import with_private_files

ROOT = Path(__file__).resolve().parents[3]
RUNS_ADMIN = "/admin/jobs/jobhistory/"


@pytest.fixture
def superuser_client(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))
    client.raise_request_exception = False
    return client


# --- /metrics -----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "header",
    [
        "Bearer é",
        "Bearer €",
        "Bearer wrong",
        "Bearer ",
        "Basic s3cret",
        "Bearer s3cret-but-longer",
        "é",
    ],
)
def test_metrics_answers_401_to_any_bad_token(settings, header):
    settings.METRICS_TOKEN = "s3cret"
    client = Client(raise_request_exception=False)
    assert client.get("/metrics", headers={"Authorization": header}).status_code == 401


@pytest.mark.django_db
def test_metrics_takes_a_token_that_is_not_ascii(settings):
    settings.METRICS_TOKEN = "sécret"
    client = Client()
    # HTTP headers arrive as Latin-1; the bytes on the wire are the token's UTF-8.
    header = "Bearer " + "sécret".encode().decode("latin-1")
    assert client.get("/metrics", headers={"Authorization": header}).status_code == 200
    assert client.get("/metrics", headers={"Authorization": "Bearer secret"}).status_code == 401


# --- NUL bytes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ["status__exact=%00", "q=a%00b", "job=%00", "created_at__gte=%00", "%00=1"],
)
def test_a_nul_in_an_admin_filter_is_a_400(superuser_client, make_run, query):
    make_run()
    assert superuser_client.get(f"{RUNS_ADMIN}?{query}").status_code == 400


def test_a_nul_in_a_form_field_is_a_400(db):
    client = Client(raise_request_exception=False)
    response = client.post("/accounts/login/", {"username": "admin\x00", "password": "x"})
    assert response.status_code == 400


def test_a_nul_in_a_header_or_the_path_is_a_400(db):
    client = Client(raise_request_exception=False)
    api = client.get("/api/v1/jobs/", headers={"Authorization": "Token abc\x00def"})
    assert api.status_code == 400
    assert client.get("/admin/jobs/jobhistory/%00/change/").status_code == 400


def test_a_nul_in_a_json_body_is_left_to_the_api(db):
    # The middleware reads forms only; a JSON body is the API's to validate.
    client = APIClient()
    client.force_authenticate(make_user("ops", staff=True))
    response = client.post("/api/v1/jobs/", data='{"name": 1', content_type="application/json")
    assert response.status_code == 400


def test_an_ordinary_admin_filter_still_works(superuser_client, make_run):
    make_run()
    assert superuser_client.get(f"{RUNS_ADMIN}?status__exact=pending").status_code == 200


# --- the runs admin's date hierarchy ---------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "created_at__year=9999",
        "created_at__year=99999999999999999999",
        "created_at__year=0",
        "created_at__year=1",
        "created_at__year=abc",
        "created_at__year=2026&created_at__month=13",
        "created_at__year=2026&created_at__month=2&created_at__day=30",
        "created_at__year=2026&created_at__month=99999999999999999999",
    ],
)
def test_a_date_the_hierarchy_cannot_filter_by_is_a_bad_filter_not_a_500(
    superuser_client, make_run, query
):
    make_run()
    response = superuser_client.get(f"{RUNS_ADMIN}?{query}")
    # The admin's answer to any bad filter: back to the list with ?e=1.
    assert response.status_code == 302
    assert response["Location"].endswith("?e=1")


def test_the_date_hierarchy_still_filters(superuser_client, make_run):
    run = make_run()
    year = run.created_at.year
    assert superuser_client.get(f"{RUNS_ADMIN}?created_at__year={year}").status_code == 200
    assert superuser_client.get(f"{RUNS_ADMIN}?created_at__year=9998").status_code == 200


# --- JSON nesting ----------------------------------------------------------------------------


def test_depth():
    assert depth(1) == 0
    assert depth([]) == 1
    assert depth({"a": [1, {"b": []}]}) == 4


@pytest.mark.django_db
@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 100_000])
def test_json_nested_too_deep_is_a_400(levels):
    client = APIClient()
    client.force_authenticate(make_user("ops", staff=True))
    body = "[" * levels + "]" * levels
    response = client.post("/api/v1/jobs/", data=body, content_type="application/json")
    assert response.status_code == 400
    assert "nested more than" in response.json()["detail"]


@pytest.mark.django_db
def test_json_nested_up_to_the_limit_reaches_validation():
    client = APIClient()
    client.force_authenticate(make_user("ops", staff=True))
    body = {"name": "deep", "command": "true", "description": [[[]]]}
    response = client.post("/api/v1/jobs/", data=json.dumps(body), content_type="application/json")
    # A 400 from the serializer (a description is text), not from the parser.
    assert response.status_code == 400
    assert "description" in response.json()


# --- the API token admin ----------------------------------------------------------------------


TOKEN_ADMIN = "/admin/jobs/apitoken/"


def test_the_token_admin_is_for_superusers_only(db, superuser_client):
    staff = make_user("staff", staff=True)
    staff.user_permissions.set(
        Permission.objects.filter(content_type__app_label="jobs", codename__endswith="apitoken")
    )
    client = Client()
    client.force_login(staff)
    assert client.get(TOKEN_ADMIN).status_code == 403
    assert client.get(f"{TOKEN_ADMIN}add/").status_code == 403
    assert "apitoken" not in client.get("/admin/").content.decode()
    assert superuser_client.get(TOKEN_ADMIN).status_code == 200
    # No add form: a secret is shown only to whoever makes it, on the dashboard.
    assert superuser_client.get(f"{TOKEN_ADMIN}add/").status_code == 403


# --- Huey messages ----------------------------------------------------------------------------


def test_huey_is_configured_with_the_json_serializer():
    assert isinstance(HUEY.serializer, JSONSerializer)


def test_a_huey_message_is_json_and_comes_back_the_same():
    task = execute_runs.s(["run-1", "run-2"])
    task.eta = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
    data = HUEY.serialize_task(task)
    message = json.loads(data)
    assert message["fields"]["name"].endswith("execute_runs")
    assert message["fields"]["args"] == [["run-1", "run-2"]]
    back = HUEY.deserialize_task(data)
    assert (back.id, back.args, back.eta) == (task.id, (["run-1", "run-2"],), task.eta)
    periodic = HUEY.deserialize_task(HUEY.serialize_task(scheduler_pass.s()))
    assert type(periodic) is type(scheduler_pass.s())


class _Boom:
    ran = False

    def __reduce__(self):
        return (_Boom.mark, ())

    @staticmethod
    def mark():
        _Boom.ran = True


def test_a_pickled_huey_message_is_refused_unread():
    payloads = [
        pickle.dumps(Message("id", "jobs.huey.tasks.execute_runs", args=(["run-1"],))),
        pickle.dumps(_Boom()),
    ]
    for payload in payloads:
        with pytest.raises(ValueError, match="not a JSON Huey message"):
            HUEY.serializer.deserialize(payload)
    assert not _Boom.ran


def test_a_message_that_json_cannot_hold_is_not_sent():
    with pytest.raises(TypeError):
        JSONSerializer().serialize({"run": object()})


# --- scripts/start's private files -------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_existing_env_file_and_database_become_owner_only(tmp_path):
    # The .env file itself: jobs/tests/project/test_terminal.py.
    for name in (".env", "db.sqlite3", "db.sqlite3-wal"):
        (tmp_path / name).write_text("SECRET_KEY=" + "x" * 60 + "\n")
        (tmp_path / name).chmod(0o644)
    done = with_private_files(tmp_path, "ensure_env_file; protect_sqlite_files")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".env").read_text() == "SECRET_KEY=" + "x" * 60 + "\n"
    for name in (".env", "db.sqlite3", "db.sqlite3-wal"):
        assert mode(tmp_path / name) == 0o600, name


def test_migrate_makes_a_new_database_owner_only(tmp_path):
    # `python manage.py migrate` stands in for a shell function that makes the file.
    done = with_private_files(tmp_path, "python() { : > db.sqlite3; }; private_migrate")
    assert done.returncode == 0, done.stderr
    assert mode(tmp_path / "db.sqlite3") == 0o600


@pytest.mark.parametrize(
    ("debug", "addr", "refused"),
    [
        ("true", "0.0.0.0:8000", True),
        ("1", "192.168.1.20:8000", True),
        ("True", "[::]:8000", True),
        ("true", "0:8000", True),
        ("true", "127.0.0.1:8000", False),
        ("true", "localhost:8000", False),
        ("true", "[::1]:8000", False),
        ("true", "8000", False),
        ("false", "0.0.0.0:8000", False),
    ],
)
def test_debug_is_refused_on_an_address_other_machines_reach(tmp_path, debug, addr, refused):
    done = with_private_files(tmp_path, f"refuse_public_debug '{addr}'", DEBUG=debug)
    assert (done.returncode != 0) == refused, done.stderr
    if refused:
        assert "DEBUG is on" in done.stderr
