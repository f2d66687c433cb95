"""The screens' URLs (mounted by jobs/urls.py). Each view is wrapped by
jobs.web.screens.screen: its login, CSRF and NUL checks, the browser's time zone and the
audit trail's actor do not depend on the project's middleware."""

from django.urls import path

from jobs.web import backfill, bulk, calendars, channels, pause, tokens, views
from jobs.web.screens import screens

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("jobs/", views.job_list, name="job_list"),
    path("jobs/new/", views.job_create, name="job_create"),
    path("jobs/bulk/", bulk.job_bulk, name="job_bulk"),
    path("jobs/schedule-preview/", views.schedule_preview, name="schedule_preview"),
    path("jobs/choices/", views.job_choices, name="job_choices"),
    path("jobs/task-arguments/", views.task_arguments, name="task_arguments"),
    # <uuid:...> answers 404 to a malformed id before any view code runs.
    path("jobs/<uuid:job_id>/", views.job_detail, name="job_detail"),
    path("jobs/<uuid:job_id>/edit/", views.job_edit, name="job_edit"),
    path("jobs/<uuid:job_id>/delete/", views.job_delete, name="job_delete"),
    path("jobs/<uuid:job_id>/run/", views.job_run, name="job_run"),
    path("jobs/<uuid:job_id>/toggle/", views.job_toggle, name="job_toggle"),
    path("jobs/<uuid:job_id>/backfill/", backfill.job_backfill, name="job_backfill"),
    path(
        "jobs/<uuid:job_id>/changes/<int:change_id>/restore/",
        views.job_restore,
        name="job_restore",
    ),
    path("upcoming/", views.upcoming_page, name="upcoming"),
    path("calendars/", calendars.calendar_list, name="calendar_list"),
    path("calendars/new/", calendars.calendar_create, name="calendar_create"),
    path("calendars/<int:calendar_id>/", calendars.calendar_edit, name="calendar_edit"),
    path("calendars/<int:calendar_id>/delete/", calendars.calendar_delete, name="calendar_delete"),
    path("channels/", channels.channel_list, name="channel_list"),
    path("channels/new/", channels.channel_create, name="channel_create"),
    path("channels/<int:channel_id>/", channels.channel_edit, name="channel_edit"),
    path("channels/<int:channel_id>/delete/", channels.channel_delete, name="channel_delete"),
    path("channels/<int:channel_id>/test/", channels.channel_test, name="channel_test"),
    path("blackouts/", calendars.blackout_list, name="blackout_list"),
    path("blackouts/new/", calendars.blackout_create, name="blackout_create"),
    path("blackouts/<int:blackout_id>/", calendars.blackout_edit, name="blackout_edit"),
    path("blackouts/<int:blackout_id>/delete/", calendars.blackout_delete, name="blackout_delete"),
    path("history/", views.history, name="history"),
    path("runs/<uuid:run_id>/", views.run_detail, name="run_detail"),
    path("runs/<uuid:run_id>/cancel/", views.run_cancel, name="run_cancel"),
    path("runs/<uuid:run_id>/again/", views.run_again, name="run_again"),
    path("scheduler/", pause.scheduler, name="scheduler"),
    path("scheduler/pause/", pause.scheduler_pause, name="scheduler_pause"),
    path("scheduler/resume/", pause.scheduler_resume, name="scheduler_resume"),
    path("api-token/", tokens.api_token, name="api_token"),
    path("api-token/<int:token_id>/revoke/", tokens.api_token_revoke, name="api_token_revoke"),
    path("healthz", views.healthz, name="healthz"),
]

# Every view above, whatever the project's middleware (jobs/web/screens.py).
urlpatterns = screens(urlpatterns)
