"""The API token page (jobs.web.tokens): one's own token, made with a POST and shown once;
another user's never; a new one replaces the old, which the API then refuses."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from jobs.access.permissions import JOB_VIEWERS
from jobs.tests.factories import make_user

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

PAGE = "/api-token/"


def _api_status(key: str) -> int:
    return Client().get(reverse("jobs:api-job-list"), HTTP_AUTHORIZATION=f"Token {key}").status_code


def test_the_page_says_there_is_none_and_a_post_makes_one_shown_once(signed_in: Client, user):
    page = signed_in.get(PAGE)
    assert page.status_code == 200
    assert "You have no token yet." in page.text
    assert page.headers["Cache-Control"].startswith("max-age=0")
    made = signed_in.post(PAGE)
    assert made.status_code == 200
    token = Token.objects.get(user=user)
    assert token.key in made.text and "no-store" in made.headers["Cache-Control"]
    assert _api_status(token.key) == 200
    # Shown once: the page later says only that there is one.
    again = signed_in.get(PAGE).text
    assert token.key not in again and "You have a token, made" in again


def test_a_new_token_replaces_the_old_one_which_stops_working(signed_in: Client, user):
    signed_in.post(PAGE)
    old = Token.objects.get(user=user).key
    made = signed_in.post(PAGE)
    new = Token.objects.get(user=user).key
    assert new != old and new in made.text and old not in made.text
    assert _api_status(old) == 401
    assert _api_status(new) == 200


def test_another_users_token_is_never_shown_nor_replaced(signed_in: Client, user):
    other = make_user("bob", JOB_VIEWERS)
    theirs = Token.objects.create(user=other)
    page = signed_in.get(PAGE).text
    assert theirs.key not in page and "You have no token yet." in page
    made = signed_in.post(PAGE, {"user": other.pk, "username": "bob"})
    assert theirs.key not in made.text
    assert Token.objects.get(user=other).key == theirs.key
    assert Token.objects.get(user=user).key in made.text


def test_a_post_needs_the_csrf_token_and_the_permission_to_see_jobs():
    viewer = make_user("carol", JOB_VIEWERS)
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(viewer)
    assert checked.post(PAGE).status_code == 403
    assert not Token.objects.exists()
    nobody = make_user("dave")
    client = Client()
    client.force_login(nobody)
    assert client.get(PAGE).status_code == 403
    assert client.post(PAGE).status_code == 403
    assert not Token.objects.exists()
    assert Client().get(PAGE).status_code == 302  # to the login page


def test_every_page_links_to_the_api_docs_and_the_token_page(signed_in: Client):
    text = signed_in.get("/").text
    assert f'href="{reverse("jobs:api-docs")}"' in text
    assert f'href="{reverse("jobs:api_token")}"' in text
    assert signed_in.get(reverse("jobs:api-docs")).status_code == 200
