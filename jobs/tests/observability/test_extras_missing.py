"""Without their extra, JOBS_OTEL and JOBS_SENTRY_CRONS are refused at start-up with the
extra to install, and nothing of either library is imported."""

from __future__ import annotations

import sys

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from jobs.observability import context, traceparent
from jobs.observability.checks import observability_settings
from jobs.runtime import observed


@pytest.fixture
def without_the_libraries(monkeypatch):
    # A None in sys.modules makes an import of the name fail as if it were not installed.
    for name in ("opentelemetry", "opentelemetry.trace", "sentry_sdk", "sentry_sdk.crons"):
        monkeypatch.setitem(sys.modules, name, None)
    yield
    observed.forget()


def test_both_settings_are_refused_naming_the_extra(without_the_libraries, settings):
    settings.JOBS_OTEL = True
    settings.JOBS_SENTRY_CRONS = True
    errors = {error.id: error for error in observability_settings()}
    assert set(errors) == {"jobs.E030", "jobs.E031"}
    assert "django-jobs-scheduler[otel]" in errors["jobs.E030"].hint
    assert "django-jobs-scheduler[sentry]" in errors["jobs.E031"].hint


@pytest.mark.django_db
def test_runscheduler_stops_at_start_when_the_extra_is_missing(without_the_libraries, settings):
    settings.JOBS_OTEL = True
    with pytest.raises(SystemCheckError, match="JOBS_OTEL is on but OpenTelemetry"):
        call_command("runscheduler", "--once", skip_checks=False)


def test_nothing_watches_runs_when_everything_is_off(settings, monkeypatch):
    monkeypatch.setattr(context, "_log_fields_wanted", False)  # no JsonFormatter configured
    settings.JOBS_OTEL = False
    settings.JOBS_SENTRY_CRONS = False
    assert observed.watcher() is None
    assert traceparent.current() == ""


def test_the_settings_are_accepted_with_the_libraries_installed(settings):
    settings.JOBS_OTEL = True
    settings.JOBS_SENTRY_CRONS = True
    assert observability_settings() == []
