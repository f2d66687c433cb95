"""The app in another project: mounted under a prefix, with Django's default middleware
(none of jobs.web.middleware, no HtmxMiddleware, no LocaleMiddleware), Django's default
context processors, no crispy-forms settings and DRF defaults that would open an API.

One thing cannot be tried here: a custom user model (AUTH_USER_MODEL cannot change within
a test run). scripts/check-host covers it, with examples/hostproject and its e-mail user
model, from the built wheel in a fresh virtualenv.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, reverse

from jobs.access.permissions import JOB_VIEWERS
from jobs.models import Blackout, Calendar, Channel, Job, JobChange, JobHistory, NotificationChannel
from jobs.tests.factories import make_job, make_run, make_token, make_user
from jobs.tests.host_urls import PREFIX
from jobs.web import urls as screen_urls

pytestmark = pytest.mark.django_db

# Django's own list (startproject).
DJANGO_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
DJANGO_TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
# A project's defaults for an API of its own.
OPEN_REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.BasicAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 1,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "rest_framework.schemas.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["rest_framework.filters.OrderingFilter"],
}

# What a page may link to: the app under the prefix, static files, itself ("?page=2"),
# and the project's admin (where the project put it) for staff, its log-out and its
# language switch.
LINK = re.compile(r'\b(?:href|src|action|hx-get|hx-post|data-[a-z-]*url)="([^"]*)"')
ALLOWED = (PREFIX, "/static/", "?", "#", "data:", "/admin/", "/accounts/", "/i18n/")


@pytest.fixture
def host(settings):  # type: ignore[no-untyped-def]
    settings.ROOT_URLCONF = "jobs.tests.host_urls"
    settings.MIDDLEWARE = DJANGO_MIDDLEWARE
    settings.TEMPLATES = DJANGO_TEMPLATES
    settings.REST_FRAMEWORK = OPEN_REST_FRAMEWORK
    settings.LOGIN_URL = "/accounts/login/"
    for name in ("CRISPY_TEMPLATE_PACK", "CRISPY_ALLOWED_TEMPLATE_PACKS"):
        delattr(settings, name)
    return settings


def _screens() -> Iterator[URLPattern]:
    def walk(patterns: list[Any]) -> Iterator[URLPattern]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns)
            else:
                yield pattern

    yield from walk(screen_urls.urlpatterns)


def _url(pattern: URLPattern, job: Job, run: JobHistory, change: JobChange) -> str:
    values = {
        "job_id": job.pk,
        "run_id": run.pk,
        "change_id": change.pk,
        # The objects fixture's (one each).
        "calendar_id": Calendar.objects.get().pk,
        "blackout_id": Blackout.objects.get().pk,
        "token_id": 1,  # a POST-only action: no token needs to exist for the GET
        "channel_id": NotificationChannel.objects.get().pk,
    }
    wanted = pattern.pattern.converters
    return reverse(f"jobs:{pattern.name}", kwargs={name: values[name] for name in wanted})


@pytest.fixture
def objects() -> tuple[Job, JobHistory, JobChange]:
    job = make_job(name="nightly")
    run = make_run(job)
    Calendar.objects.create(name="office", country="JP")
    Blackout.objects.create(name="release", cron_expression="0 22 * * 5", duration_minutes=60)
    NotificationChannel.objects.create(name="team chat", url="json://chat.example.com/hook")
    return job, run, JobChange.objects.filter(job_id=job.pk).latest("created_at")


def test_every_screen_and_every_link_in_it_is_under_the_prefix(host, objects):
    job, run, change = objects
    client = Client()
    client.force_login(make_user("root", superuser=True))
    pages = 0
    for pattern in _screens():
        url = _url(pattern, job, run, change)
        assert url.startswith(PREFIX), url
        response = client.get(url)
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue  # a POST-only action, or JSON (/healthz)
        html = response.content.decode()
        links = LINK.findall(html)
        if "<html" in html:  # a whole page, not a fragment htmx swaps in
            pages += 1
            assert links, url
        outside = [link for link in links if not link.startswith(ALLOWED)]
        assert outside == [], f"{url} links outside {PREFIX}: {outside}"
    assert pages >= 10


def test_the_project_s_own_dashboard_job_list_and_history_do_not_clash_with_the_app_s(host):
    assert [reverse(name) for name in ("dashboard", "job_list", "history")] == [
        "/",
        "/own/jobs/",
        "/own/history/",
    ]
    assert reverse("jobs:dashboard") == PREFIX
    client = Client()
    client.force_login(make_user("root", superuser=True))
    assert client.get("/").content == b"the project's own dashboard"
    page = client.get(reverse("jobs:dashboard")).content.decode()
    links = set(LINK.findall(page))
    assert {PREFIX, f"{PREFIX}jobs/", f"{PREFIX}history/"} <= links
    assert links & {"/", "/own/jobs/", "/own/history/"} == set()
    # A form's redirect after its POST goes to the app's page too.
    job = make_job(name="nightly")
    deleted = client.post(reverse("jobs:job_delete", args=[job.pk]))
    assert deleted["Location"] == f"{PREFIX}jobs/"


def test_every_screen_sends_an_anonymous_visitor_to_the_login_page(host, objects):
    job, run, change = objects
    client = Client()
    for pattern in _screens():
        url = _url(pattern, job, run, change)
        if pattern.name == "healthz":
            assert client.get(url).status_code == 200
            continue
        for method in (client.get, client.post):
            response = method(url)
            assert response.status_code == 302, (url, response.status_code)
            assert response["Location"] == f"/accounts/login/?next={url}"
    # A page's polling after the session expired: the whole tab goes to the login page.
    polled = client.get(reverse("jobs:dashboard"), HTTP_HX_REQUEST="true")
    assert polled["HX-Redirect"] == f"/accounts/login/?next={PREFIX}"
    assert Job.objects.get().is_active  # no POST changed anything


def test_a_screen_checks_csrf_without_the_middleware(host):
    host.MIDDLEWARE = [m for m in DJANGO_MIDDLEWARE if "csrf" not in m]
    job = make_job(name="nightly")
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("root", superuser=True))
    assert client.post(reverse("jobs:job_toggle", args=[job.pk])).status_code == 403
    assert Job.objects.get().is_active


def test_a_nul_byte_is_refused_without_the_middleware(host):
    client = Client()
    client.force_login(make_user("root", superuser=True))
    assert client.get(reverse("jobs:job_list"), {"q": "a\x00b"}).status_code == 400
    token = make_token(make_user("viewer", JOB_VIEWERS))
    api = Client(HTTP_AUTHORIZATION=f"Token {token}\x00")
    assert api.get(reverse("jobs:api-job-list")).status_code == 400


def test_the_browser_zone_and_the_actor_without_the_middleware(host):
    job = make_job(name="nightly")
    client = Client()
    root = make_user("root", superuser=True)
    client.force_login(root)
    client.cookies["tz"] = "Asia/Tokyo"
    assert "Time zone: Asia/Tokyo" in client.get(reverse("jobs:job_list")).content.decode()
    assert client.post(reverse("jobs:job_toggle", args=[job.pk])).status_code == 302
    change = JobChange.objects.filter(job_id=job.pk).latest("created_at")
    assert (change.channel, change.username) == (Channel.DASHBOARD, "root")
    # The admin's pages of the app's models too.
    response = client.post(
        reverse("admin:jobs_job_changelist"),
        {"action": "run_now", "_selected_action": [str(job.pk)]},
    )
    assert response.status_code == 302
    run_now = JobChange.objects.filter(job_id=job.pk).latest("created_at")
    assert (run_now.action, run_now.channel, run_now.username) == ("run_now", "admin", "root")


def test_the_api_keeps_its_own_authentication_permissions_and_pages(host):
    make_job(name="one")
    make_job(name="two")
    anonymous = Client()
    assert anonymous.get(reverse("jobs:api-job-list")).status_code == 401
    refused = anonymous.post(
        reverse("jobs:api-job-list"),
        {"name": "x", "schedule_type": "interval", "interval": 1, "interval_unit": "hour"},
        content_type="application/json",
    )
    assert refused.status_code == 401 and Job.objects.count() == 2
    # The project's BasicAuthentication is not the API's.
    make_user("viewer", JOB_VIEWERS, password="right-password")
    basic = Client(HTTP_AUTHORIZATION="Basic dmlld2VyOnJpZ2h0LXBhc3N3b3Jk")  # viewer:right-password
    assert basic.get(reverse("jobs:api-job-list")).status_code == 401
    token = make_token(make_user("reader", JOB_VIEWERS))
    reader = Client(HTTP_AUTHORIZATION=f"Token {token}")
    page = reader.get(reverse("jobs:api-job-list"))
    assert page.status_code == 200
    body = page.json()
    assert set(body) == {"count", "next", "previous", "results"} and body["count"] == 2
    assert len(body["results"]) == 2  # not the project's PAGE_SIZE of 1
    # A write needs its permission whatever the project's AllowAny says.
    assert (
        reader.post(reverse("jobs:api-job-list"), {}, content_type="application/json").status_code
        == 403
    )


def test_the_api_schema_gives_the_paths_under_the_prefix(host):
    schema = Client().get(reverse("jobs:api-schema"), {"format": "json"})
    assert schema.status_code == 200
    paths = list(schema.json()["paths"])
    assert paths and all(path.startswith(f"{PREFIX}api/v1/") for path in paths), paths
    assert f"{PREFIX}api/v1/jobs/" in paths
    docs = Client().get(reverse("jobs:api-docs"))
    assert docs.status_code == 200 and f"{PREFIX}api/docs/?script=" in docs.content.decode()
    # Swagger UI's start-up script (a URL of its own, not inline) names the schema.
    script = Client().get(reverse("jobs:api-docs"), {"script": ""})
    assert script.status_code == 200 and f"{PREFIX}api/schema/" in script.content.decode()


@pytest.mark.parametrize(
    ("middleware", "recorded"),
    [([], ("system", "")), (["jobs.web.middleware.ActorMiddleware"], ("dashboard", "root"))],
)
def test_the_actor_middleware_names_the_user_of_the_projects_own_views(host, middleware, recorded):
    host.MIDDLEWARE = DJANGO_MIDDLEWARE + middleware
    job = make_job(name="nightly")
    client = Client()
    client.force_login(make_user("root", superuser=True))
    assert client.post(f"/own/{job.pk}/disable/").status_code == 200
    change = JobChange.objects.filter(job_id=job.pk).latest("created_at")
    assert (change.action, change.channel, change.username) == ("disable", *recorded)


@pytest.fixture
def startproject_languages(host):  # type: ignore[no-untyped-def]
    """startproject's language settings: Django's whole LANGUAGES, LANGUAGE_CODE en-us."""
    from django.conf import global_settings

    host.LANGUAGES = global_settings.LANGUAGES
    host.LANGUAGE_CODE = "en-us"
    return host


def test_a_visitor_logs_in_through_django_s_auth_urls_and_lands_on_the_screen(host):
    make_user("root", superuser=True, password="a long pass phrase")
    client = Client()
    sent = client.get(reverse("jobs:job_list"))
    assert sent.status_code == 302
    assert sent["Location"] == f"/accounts/login/?next={PREFIX}jobs/"
    page = client.get(sent["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="username"' in html and 'name="password"' in html
    assert f'name="next" value="{PREFIX}jobs/"' in html
    # Django's own auth URLs have no password-reset templates of the app's to need.
    assert "/accounts/password_reset/" in html
    logged_in = client.post(
        sent["Location"],
        {"username": "root", "password": "a long pass phrase", "next": f"{PREFIX}jobs/"},
    )
    assert logged_in.status_code == 302 and logged_in["Location"] == f"{PREFIX}jobs/"
    assert client.get(logged_in["Location"]).status_code == 200


def test_a_wrong_password_on_the_host_s_login_page_says_so_and_logs_nobody_in(host):
    make_user("root", superuser=True, password="a long pass phrase")
    client = Client()
    page = client.post("/accounts/login/", {"username": "root", "password": "wrong"})
    assert page.status_code == 200
    assert "Please enter a correct" in page.content.decode()
    assert client.get(reverse("jobs:job_list")).status_code == 302


def _switch(html: str) -> list[tuple[str, bool]]:
    select = html[html.index('<select name="language"') : html.index("</select>")]
    return [
        (code, bool(selected))
        for code, selected in re.findall(r'<option value="([^"]+)"[^>]*?( selected)?>', select)
    ]


def test_the_language_switch_offers_the_app_s_languages_with_en_us_as_english(
    startproject_languages,
):
    client = Client()
    client.force_login(make_user("root", superuser=True))
    html = client.get(reverse("jobs:dashboard")).content.decode()
    assert _switch(html) == [("en", True), ("ja", False)]
    assert ">English</option>" in html and "Afrikaans" not in html


def test_the_language_switch_works_without_locale_middleware(startproject_languages):
    client = Client()
    client.force_login(make_user("root", superuser=True))
    chosen = client.post("/i18n/setlang/", {"language": "ja", "next": reverse("jobs:job_list")})
    assert chosen.status_code == 302
    html = client.get(reverse("jobs:job_list")).content.decode()
    assert '<html lang="ja">' in html
    assert _switch(html) == [("en", False), ("ja", True)]
    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert '<html lang="en">' in client.get(reverse("jobs:job_list")).content.decode()


def test_no_switch_when_the_project_offers_one_of_the_app_s_languages_only(host):
    host.LANGUAGES = [("en-us", "English"), ("fr", "French")]
    client = Client()
    client.force_login(make_user("root", superuser=True))
    assert 'name="language"' not in client.get(reverse("jobs:dashboard")).content.decode()
