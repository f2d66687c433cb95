"""Drive the installed scheduler in this project the way a user and a script would.

    python smoke.py before   # the app under /scheduler/: logins, the API, a job for the task
    python manage.py runscheduler --once
    python smoke.py after    # the task ran, and the run and the audit trail say who did it

Requests go through Django's test client: the whole middleware stack and URLconf of
this project, without a server. Run from this folder, with the package installed.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hostproject.settings")
django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Group  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.test import Client  # noqa: E402

EMAIL = "ops@example.com"
TASK = "reports.tasks.write_marker"
CODE_JOB = "reports.tasks.count_reports:weekday-mornings"
TEXT = "written by the scheduler"
STATE = settings.BASE_DIR / "smoke-state.json"


def check(condition: bool, message: str) -> None:
    if not condition:
        sys.exit(f"smoke: FAILED: {message}")
    print(f"smoke: ok: {message}")


def api(token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {token}")


def before() -> None:
    """Everything a user and a script do before the scheduler's pass, checked in turn;
    what after() needs is written to STATE."""
    _check_installed_and_public()
    user, token = _job_admin()
    job, run = _check_api(token)
    code_run = _check_code_job(token)
    browser = Client()
    browser.force_login(user)
    _check_screens(browser, job)
    _check_schema(browser)
    STATE.write_text(
        json.dumps(
            {
                "token": token,
                "job": job["id"],
                "run": run.json()["id"],
                "code_run": code_run.json()["id"],
            }
        )
    )


def _check_installed_and_public() -> None:
    """The installed package, and what a visitor who has not logged in gets."""
    import jobs

    check("site-packages" in jobs.__file__, f"jobs is the installed package ({jobs.__file__})")

    anonymous = Client()
    page = anonymous.get("/scheduler/jobs/")
    check(
        page.status_code == 302 and page["Location"] == "/accounts/login/?next=/scheduler/jobs/",
        "an anonymous visitor is sent to the project's LOGIN_URL",
    )
    login = anonymous.get(page["Location"])
    check(
        login.status_code == 200 and b'name="password"' in login.content,
        "django.contrib.auth.urls' login page is served (the app's registration/login.html)",
    )
    check(anonymous.get("/scheduler/healthz").status_code == 200, "/healthz is public")
    check(
        anonymous.get("/scheduler/api/v1/jobs/").status_code == 401,
        "the API refuses an anonymous request although the project's DRF default is AllowAny",
    )


def _job_admin() -> tuple[object, str]:
    """A user of the custom model (e-mail, no username), a Job admin (migration 0006), and
    an API token of theirs."""
    user = get_user_model().objects.create_user(EMAIL, password="not-used", is_staff=True)
    user.groups.add(Group.objects.get(name="Job admins"))
    out = io.StringIO()
    call_command("apitoken", EMAIL, stdout=out)
    token = out.getvalue().strip()
    return user, token


def _check_api(token: str) -> tuple[dict, HttpResponse]:
    """The API creates a job for the project's task, pages its own way and starts a run."""
    created = api(token).post(
        "/scheduler/api/v1/jobs/",
        json.dumps(
            {
                "name": "write the marker",
                "executor": "python",
                "command": TASK,
                "arguments": {"text": TEXT},
                "schedule_type": "interval",
                "interval": 1,
                "interval_unit": "day",
            }
        ),
        content_type="application/json",
    )
    check(
        created.status_code == 201,
        "the API creates a job for the project's task"
        + ("" if created.status_code == 201 else f": {created.status_code} {created.content!r}"),
    )
    job = created.json()
    listed = api(token).get("/scheduler/api/v1/jobs/").json()
    check(
        set(listed) >= {"count", "next", "previous", "results"} and listed["count"] == 2,
        "the API pages with its own paginator, not the project's LimitOffsetPagination",
    )
    run = api(token).post(
        f"/scheduler/api/v1/jobs/{job['id']}/run/", "{}", content_type="application/json"
    )
    check(run.status_code == 201, "the API starts a run now")
    return job, run


def _check_code_job(token: str) -> HttpResponse:
    """The job declared in reports/tasks.py, made by syncjobs: its schedule is the code's."""
    declared = api(token).get("/scheduler/api/v1/jobs/", {"search": "count_reports"}).json()
    code_job = next((j for j in declared["results"] if j["name"] == CODE_JOB), None)
    check(
        code_job is not None
        and code_job["declared_in_code"]
        and code_job["code_source"] == "reports/tasks.py"
        and (code_job["cron_expression"], code_job["timezone"]) == ("0 6 * * 1-5", "Asia/Tokyo"),
        f"syncjobs made the job declared in code ({code_job})",
    )
    refused = api(token).patch(
        f"/scheduler/api/v1/jobs/{code_job['id']}/",
        json.dumps({"cron_expression": "* * * * *"}),
        content_type="application/json",
    )
    check(refused.status_code == 400, "a field the code owns is refused through the API")
    code_run = api(token).post(
        f"/scheduler/api/v1/jobs/{code_job['id']}/run/", "{}", content_type="application/json"
    )
    check(code_run.status_code == 201, "the API starts a run of the job declared in code")
    return code_run


def _check_screens(browser: Client, job: dict) -> None:
    """The dashboard, its links under the prefix beside the project's own URLs, the job's
    page, the form and the admin."""
    dashboard = browser.get("/scheduler/")
    html = dashboard.content.decode()
    check(dashboard.status_code == 200, "the dashboard renders")
    links = re.findall(r'(?:href|hx-get|hx-post|action|src)="([^"#][^"]*)"', html)
    # The project's own pages (admin, log-out) are its to place; the app's are under the prefix.
    ours = ("/scheduler/", "/static/", "/admin/", "/accounts/logout/", "data:")
    outside = [link for link in links if not link.startswith(ours)]
    check(
        bool(links) and not outside,
        f"the dashboard's links are under /scheduler/ (else: {outside})",
    )
    own = browser.get("/")
    check(
        own.status_code == 200
        and b"own dashboard" in own.content
        and 'href="/"' not in html
        and 'href="/scheduler/"' in html,
        "the project's own URL named dashboard and the app's jobs:dashboard do not clash",
    )
    detail = browser.get(f"/scheduler/jobs/{job['id']}/")
    check(
        detail.status_code == 200 and TASK in detail.content.decode(),
        "the job's page shows the task",
    )
    form = browser.get("/scheduler/jobs/new/")
    check(
        form.status_code == 200 and 'name="command"' in form.content.decode(),
        "the job form renders (crispy, Bootstrap 5, without crispy settings)",
    )
    check(browser.get("/admin/jobs/job/").status_code == 200, "the admin lists the jobs")


def _check_schema(browser: Client) -> None:
    """The API's schema names its paths under the app's prefix."""
    schema = browser.get("/scheduler/api/schema/?format=json")
    paths = list(json.loads(schema.content)["paths"]) if schema.status_code == 200 else []
    check(
        bool(paths) and all(path.startswith("/scheduler/api/v1/") for path in paths),
        f"the API's schema gives its paths under the prefix ({paths[:2]} ...)",
    )


def after() -> None:
    state = json.loads(STATE.read_text())
    check(settings.MARKER_FILE.exists(), f"the task wrote {settings.MARKER_FILE}")
    check(settings.MARKER_FILE.read_text() == TEXT, "with the job's arguments")
    run = api(state["token"]).get(f"/scheduler/api/v1/runs/{state['run']}/").json()
    check(run["status"] == "success", f"the run is recorded as a success ({run['status']})")
    check(settings.CODE_MARKER_FILE.exists(), "the job declared in code ran")
    code_run = api(state["token"]).get(f"/scheduler/api/v1/runs/{state['code_run']}/").json()
    check(code_run["status"] == "success", f"its run is a success ({code_run['status']})")
    changes = api(state["token"]).get(f"/scheduler/api/v1/jobs/{state['job']}/changes/").json()
    actors = {(c["action"], c["channel"], c["user"]) for c in changes["results"]}
    check(("create", "api", EMAIL) in actors, f"the audit trail names the custom user ({actors})")


if __name__ == "__main__":
    {"before": before, "after": after}[sys.argv[1]]()
