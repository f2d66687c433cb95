"""API tokens (jobs.models.tokens) at the API: expired, revoked, read-only, last use
noted at most once a minute; `manage.py apitoken`; the admin's revoke; migration 0027
moving rest_framework.authtoken's keys in."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from jobs.access.permissions import JOB_ADMINS
from jobs.api.authentication import LockoutTokenAuthentication
from jobs.models import ApiToken, Job, SchedulerAction, SchedulerEvent, find_token, revoke_token
from jobs.tests.factories import make_token, make_user

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs/"
VALID = {
    "name": "n",
    "command": "python report.py",
    "schedule_type": "interval",
    "interval": 5,
    "interval_unit": "minute",
}
NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def _api(text: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {text}")
    return client


@pytest.fixture
def admin():  # type: ignore[no-untyped-def]
    return make_user("ann", JOB_ADMINS)


def test_a_token_authenticates_as_its_user_and_request_auth_is_the_token(admin):
    text = make_token(admin, name="ci")
    assert _api(text).post(JOBS, VALID, format="json").status_code == 201
    assert Job.objects.get().name == "n"
    request = Request(APIRequestFactory().get(JOBS, HTTP_AUTHORIZATION=f"Token {text}"))
    user, auth = LockoutTokenAuthentication().authenticate(request)
    assert (user, auth) == (admin, find_token(text)) and auth.team_id is None


def test_an_unknown_token_is_401():
    assert _api("jobs_0123abcd_" + "x" * 43).get(JOBS).status_code == 401
    assert _api("not-a-token").get(JOBS).status_code == 401


def test_an_expired_token_is_401_saying_when(admin):
    with time_machine.travel(NOW, tick=False) as clock:
        text = make_token(admin, days=1)
        assert _api(text).get(JOBS).status_code == 200
        clock.shift(timedelta(days=1))
        refused = _api(text).get(JOBS)
    assert refused.status_code == 401
    assert refused.json()["detail"].startswith("The token expired on ")
    assert "2026" in refused.json()["detail"]


def test_a_revoked_token_is_401_saying_when(admin):
    text = make_token(admin)
    revoke_token(find_token(text))
    refused = _api(text).get(JOBS)
    assert refused.status_code == 401
    assert refused.json()["detail"].startswith("The token was revoked on ")


def test_a_read_only_token_reads_but_may_not_write(admin):
    text = make_token(admin, read_only=True)
    assert _api(text).get(JOBS).status_code == 200
    refused = _api(text).post(JOBS, VALID, format="json")
    assert refused.status_code == 403
    assert "read-only" in refused.json()["detail"]
    assert not Job.objects.exists()


def test_a_token_of_an_inactive_user_is_401(admin):
    text = make_token(admin)
    admin.is_active = False
    admin.save()
    assert _api(text).get(JOBS).status_code == 401


def test_session_authentication_still_works(admin):
    client = Client()
    client.force_login(admin)
    assert client.get(JOBS).status_code == 200


def test_last_use_is_written_at_most_once_a_minute(admin):
    with time_machine.travel(NOW, tick=False) as clock:
        text = make_token(admin)
        assert find_token(text).last_used_at is None
        _api(text).get(JOBS)
        assert find_token(text).last_used_at == NOW
        clock.shift(timedelta(seconds=59))
        _api(text).get(JOBS)
        assert find_token(text).last_used_at == NOW
        clock.shift(timedelta(seconds=1))
        _api(text).get(JOBS)
        assert find_token(text).last_used_at == NOW + timedelta(minutes=1)


def test_the_command_makes_a_named_token_printed_once_holding_no_secret(admin):
    team = Group.objects.create(name="payments")
    admin.groups.add(team)
    out = StringIO()
    call_command(
        "apitoken", "ann", "--name", "deploy", "--days", "3", "--team", "payments",
        "--read-only", stdout=out, stderr=StringIO(),
    )  # fmt: skip
    text = out.getvalue().strip()
    token = find_token(text)
    assert (token.name, token.team, token.read_only) == ("deploy", team, True)
    assert token.expires_at - token.created_at == timedelta(days=3)
    columns = [field.attname for field in ApiToken._meta.concrete_fields]
    assert text.split("_", 2)[2] not in repr(list(ApiToken.objects.values_list(*columns)))
    assert _api(token.key_hash).get(JOBS).status_code == 401
    event = SchedulerEvent.objects.get(action=SchedulerAction.TOKEN_CREATE)
    assert event.channel == "command" and text not in event.note


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--days", "0"], "days"),
        (["--days", "91"], "days"),
        (["--team", "nowhere"], "no team"),
        (["--name", ""], "name"),
    ],
)
def test_the_command_refuses_bad_choices_and_saves_nothing(admin, arguments, message):
    Group.objects.create(name="search")  # not ann's
    with pytest.raises(CommandError, match=message):
        call_command("apitoken", "ann", *arguments, stdout=StringIO())
    assert not ApiToken.objects.exists()


def test_the_command_refuses_a_team_the_user_is_not_in(admin):
    Group.objects.create(name="search")
    with pytest.raises(CommandError, match="team"):
        call_command("apitoken", "ann", "--team", "search", stdout=StringIO())
    assert not ApiToken.objects.exists()


def test_the_admin_revokes_and_never_shows_the_hash(admin):
    text = make_token(admin, name="ci")
    token = find_token(text)
    root = Client()
    root.force_login(make_user("root", superuser=True))
    listing = root.get("/admin/jobs/apitoken/").content.decode()
    assert "ci" in listing and token.key_hash not in listing
    assert (
        token.key_hash not in root.get(f"/admin/jobs/apitoken/{token.pk}/change/").content.decode()
    )
    answer = root.post(
        "/admin/jobs/apitoken/", {"action": "revoke_tokens", "_selected_action": [token.pk]}
    )
    assert answer.status_code == 302
    assert _api(text).get(JOBS).status_code == 401
    event = SchedulerEvent.objects.get(action=SchedulerAction.TOKEN_REVOKE)
    assert (event.username, event.channel) == ("root", "admin")


BEFORE = [("jobs", "0026_mysql_indexes"), ("authtoken", "0004_alter_tokenproxy_options")]
AFTER = [("jobs", "0027_api_tokens")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_legacy_keys_in_hashed_and_they_keep_working_until_expiry():
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    key = "0123456789abcdef0123456789abcdef01234567"
    try:
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        user = old.get_model("auth", "User").objects.create(username="legacy")
        old.get_model("authtoken", "Token").objects.create(key=key, user=user)
        with time_machine.travel(NOW, tick=False):
            MigrationExecutor(connection).migrate(AFTER)
        new = MigrationExecutor(connection).loader.project_state(AFTER).apps
        assert not new.get_model("authtoken", "Token").objects.exists()
        moved = new.get_model("jobs", "ApiToken").objects.get()
        assert (moved.name, moved.prefix, moved.user_id) == ("migrated", key[:8], user.pk)
        assert moved.key_hash == hashlib.sha256(key.encode()).hexdigest()
        assert moved.expires_at == NOW + timedelta(days=90)
    finally:
        MigrationExecutor(connection).migrate(latest)
    from django.contrib.auth.models import Permission

    legacy = ApiToken.objects.get().user
    legacy.user_permissions.add(Permission.objects.get(codename="view_job"))
    with time_machine.travel(NOW + timedelta(days=89), tick=False):
        assert _api(key).get(JOBS).status_code == 200
    with time_machine.travel(NOW + timedelta(days=90), tick=False):
        assert "expired" in _api(key).get(JOBS).json()["detail"]
