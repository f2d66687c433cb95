"""The icon: shipped in the app, linked from the dashboard's and the admin's pages, and
at /favicon.ico in the standalone site (browsers ask there when a page links none)."""

from __future__ import annotations

import struct
from xml.etree import ElementTree

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

ICON_LINK = '<link rel="icon" href="/static/jobs/favicon.svg" type="image/svg+xml">'


def test_the_icons_ship_with_the_app() -> None:
    svg = finders.find("jobs/favicon.svg")
    assert svg, "jobs/static/jobs/favicon.svg is missing"
    assert ElementTree.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    ico = finders.find("jobs/favicon.ico")
    assert ico, "jobs/static/jobs/favicon.ico is missing"
    with open(ico, "rb") as file:
        data = file.read()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind, count) == (0, 1, 1)  # an icon file with one image
    assert len(data) < 4096


def test_the_dashboard_and_the_admin_link_the_icon(client: Client, admin_client: Client) -> None:
    for url in (reverse("login"), reverse("admin:login")):
        assert ICON_LINK in client.get(url).text, url
    for url in (reverse("admin:index"), reverse("admin:jobs_jobhistory_changelist")):
        assert ICON_LINK in admin_client.get(url).text, url


def test_favicon_ico_leads_to_the_icon_without_a_login(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == "/static/jobs/favicon.ico"
