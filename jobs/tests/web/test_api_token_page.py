"""The API tokens page (jobs.web.tokens): one's own tokens, made with a POST and shown
once, then only their prefix; another user's never; bad choices save nothing; revoking
one stops it at once."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from jobs.access.permissions import JOB_VIEWERS
from jobs.models import ApiToken, SchedulerAction, SchedulerEvent, find_token
from jobs.tests.factories import make_token, make_user

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

PAGE = "/api-token/"


def _api_status(key: str) -> int:
    return Client().get(reverse("jobs:api-job-list"), HTTP_AUTHORIZATION=f"Token {key}").status_code


def _new_text(page: str) -> str:
    return page.split('id="token-key" value="')[1].split('"')[0]


def _all_stored_text() -> str:
    """Every column of every token row, as text."""
    columns = [field.attname for field in ApiToken._meta.concrete_fields]
    return repr(list(ApiToken.objects.values_list(*columns)))


def test_a_post_makes_a_token_shown_once_then_only_its_prefix(signed_in: Client, user):
    page = signed_in.get(PAGE)
    assert page.status_code == 200
    assert "You have no token yet." in page.text
    assert page.headers["Cache-Control"].startswith("max-age=0")
    made = signed_in.post(PAGE, {"name": "deploy", "days": 30})
    assert made.status_code == 200 and "no-store" in made.headers["Cache-Control"]
    text = _new_text(made.text)
    token = ApiToken.objects.get(user=user)
    assert (token.name, token.prefix) == ("deploy", text.split("_")[1])
    assert (token.expires_at - token.created_at).days == 30
    assert _api_status(text) == 200
    again = signed_in.get(PAGE).text
    assert text not in again and token.prefix in again and "deploy" in again
    event = SchedulerEvent.objects.get(action=SchedulerAction.TOKEN_CREATE)
    assert (event.username, event.channel) == ("alice", "dashboard")
    assert "deploy" in event.note and text not in event.note


def test_the_database_holds_no_usable_token(signed_in: Client):
    text = _new_text(signed_in.post(PAGE, {"name": "ci", "days": 1}).text)
    secret = text.split("_", 2)[2]
    stored = _all_stored_text()
    assert text not in stored and secret not in stored
    # The stored hash alone does not authenticate, in either shape.
    key_hash = ApiToken.objects.get().key_hash
    assert _api_status(key_hash) == 401
    assert _api_status(key_hash[:40]) == 401
    assert _api_status(text) == 200


@pytest.mark.parametrize(
    ("data", "field_error"),
    [
        ({"name": "", "days": 5}, "This field is required."),
        ({"name": "   ", "days": 5}, "This field is required."),
        ({"name": "taken", "days": 5}, "You already have a token named taken."),
        ({"name": "x", "days": 0}, "greater than or equal to 1"),
        ({"name": "x", "days": 91}, "less than or equal to 90"),
        ({"name": "x", "days": "soon"}, "Enter a whole number."),
    ],
)
def test_bad_choices_say_why_and_save_nothing(signed_in: Client, user, data, field_error):
    make_token(user, name="taken")
    answer = signed_in.post(PAGE, data)
    assert answer.status_code == 400
    assert field_error in answer.text
    assert ApiToken.objects.count() == 1
    assert 'id="token-key"' not in answer.text


def test_the_longest_life_is_the_setting(signed_in: Client, settings):
    settings.JOBS_TOKEN_MAX_DAYS = 7
    assert signed_in.post(PAGE, {"name": "x", "days": 8}).status_code == 400
    assert signed_in.post(PAGE, {"name": "x", "days": 7}).status_code == 200


def test_a_team_must_be_ones_own(signed_in: Client, user):
    mine, theirs = Group.objects.create(name="payments"), Group.objects.create(name="search")
    user.groups.add(mine)
    refused = signed_in.post(PAGE, {"name": "x", "days": 5, "team": theirs.pk})
    assert refused.status_code == 400 and not ApiToken.objects.exists()
    made = signed_in.post(PAGE, {"name": "x", "days": 5, "team": mine.pk, "read_only": "on"})
    assert made.status_code == 200
    token = find_token(_new_text(made.text))
    assert (token.team, token.read_only) == (mine, True)


def test_revoking_stops_the_token_and_is_recorded(signed_in: Client, user):
    text = _new_text(signed_in.post(PAGE, {"name": "old", "days": 5}).text)
    token = ApiToken.objects.get()
    assert signed_in.post(reverse("jobs:api_token_revoke", args=[token.pk])).status_code == 302
    assert _api_status(text) == 401
    assert "revoked" in signed_in.get(PAGE).text
    assert SchedulerEvent.objects.filter(action=SchedulerAction.TOKEN_REVOKE).count() == 1
    # Once is enough: a second revoke records nothing.
    signed_in.post(reverse("jobs:api_token_revoke", args=[token.pk]))
    assert SchedulerEvent.objects.filter(action=SchedulerAction.TOKEN_REVOKE).count() == 1


def test_another_users_token_is_never_shown_nor_revoked(signed_in: Client, user):
    other = make_user("bob", JOB_VIEWERS)
    theirs = make_token(other, name="bobs")
    page = signed_in.get(PAGE).text
    assert "bobs" not in page and "You have no token yet." in page
    token = find_token(theirs)
    assert signed_in.post(reverse("jobs:api_token_revoke", args=[token.pk])).status_code == 404
    assert _api_status(theirs) == 200


def test_a_post_needs_the_csrf_token_and_the_permission_to_see_jobs():
    viewer = make_user("carol", JOB_VIEWERS)
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(viewer)
    assert checked.post(PAGE, {"name": "x", "days": 5}).status_code == 403
    assert not ApiToken.objects.exists()
    nobody = make_user("dave")
    client = Client()
    client.force_login(nobody)
    assert client.get(PAGE).status_code == 403
    assert client.post(PAGE, {"name": "x", "days": 5}).status_code == 403
    assert not ApiToken.objects.exists()
    assert Client().get(PAGE).status_code == 302  # to the login page


def test_every_page_links_to_the_api_docs_and_the_token_page(signed_in: Client):
    text = signed_in.get("/").text
    assert f'href="{reverse("jobs:api-docs")}"' in text
    assert f'href="{reverse("jobs:api_token")}"' in text
    assert signed_in.get(reverse("jobs:api-docs")).status_code == 200
