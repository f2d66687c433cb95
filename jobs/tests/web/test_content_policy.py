"""The Content-Security-Policy header is on every page of the site: the screens, the
login page, the admin, the API's browsable pages, its docs (scheduler_site/content_policy.py).
The browser's side (nothing refused, the pages still work): test_browser_csp.py."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from jobs.api.browsable import DRF_STYLE_ATTRIBUTES, STYLE_ATTRIBUTES
from jobs.tests import personas
from jobs.tests.factories import make_job, make_run
from jobs.tests.web.test_public_pages import _paths
from scheduler_site.content_policy import DIRECTIVES

pytestmark = pytest.mark.django_db

HEADER = "Content-Security-Policy"


def _directives(response) -> dict[str, str]:  # type: ignore[no-untyped-def]
    policy = response[HEADER]
    return dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())


def _assert_strict(response, path: str) -> None:  # type: ignore[no-untyped-def]
    assert HEADER in response, f"{path} ({response.status_code}) has no {HEADER}"
    directives = _directives(response)
    for name, values in DIRECTIVES.items():
        assert directives[name] == " ".join(values), (path, name)
    assert "unsafe-inline" not in response[HEADER], path
    assert "unsafe-eval" not in response[HEADER], path


def test_every_page_of_the_site_has_the_policy() -> None:
    from django.urls import get_resolver

    job = make_job(name="policed")
    run = make_run(job)
    root = personas.signed_in(personas.superuser())
    anonymous = Client()
    paths = sorted(set(_paths(get_resolver().url_patterns)))
    assert len(paths) > 20
    for path in paths:
        path = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", str(job.pk), path, count=1)
        for client in (root, anonymous):
            _assert_strict(client.get(path), path)
    for path in (
        "/admin/",
        "/admin/jobs/job/",
        f"/admin/jobs/job/{job.pk}/change/",
        "/admin/jobs/jobhistory/",
        f"/runs/{run.pk}/",
        "/admin/login/",
        "/accounts/login/",
    ):
        _assert_strict(root.get(path), path)
        _assert_strict(anonymous.get(path), path)


def test_the_api_docs_load_their_start_up_script_from_a_url_not_inline() -> None:
    page = Client().get("/api/docs/")
    html = page.content.decode()
    _assert_strict(page, "/api/docs/")
    assert "<style" not in html
    # Every <script> has a src: none is inline.
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    assert '<script src="/api/docs/?script="></script>' in html
    script = Client().get("/api/docs/?script=")
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


def test_the_browsable_api_allows_drf_s_own_style_attributes_by_hash_only() -> None:
    root = personas.signed_in(personas.superuser())
    job = make_job(name="browsed")
    page = root.get(f"/api/v1/jobs/{job.pk}/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<style" not in html  # no Pygments styles
    directives = _directives(page)
    assert directives["style-src-attr"] == " ".join(STYLE_ATTRIBUTES["style-src-attr"])
    assert directives["style-src"] == "'self'" and directives["script-src"] == "'self'"
    assert "unsafe-inline" not in page[HEADER]
    # Each style attribute on the page is one of those whose hash is allowed.
    assert set(re.findall(r'style="([^"]*)"', html)) <= set(DRF_STYLE_ATTRIBUTES)
    # The JSON answer has the site's policy, no exception.
    _assert_strict(root.get(f"/api/v1/jobs/{job.pk}/"), "json")


def test_the_apps_templates_have_no_inline_script_style_or_handler() -> None:
    from pathlib import Path

    import jobs

    found = []
    for folder in (
        Path(jobs.__file__).parent / "templates",
        Path(jobs.__file__).parents[1] / "templates",
    ):
        for template in folder.rglob("*.html"):
            text = template.read_text()
            inline = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", text)
            inline += re.findall(r"<style|\sstyle=\"|\son[a-z]+=\"|hx-on|javascript:", text)
            # hx-trigger filters ("[...]") are run through eval by htmx.
            inline += re.findall(r'hx-trigger="[^"]*\[', text)
            found += [f"{template.name}: {what}" for what in inline]
    assert found == []
