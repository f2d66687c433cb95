"""The Django admin as a second console for operators.

Thin by design: state changes go through `jobs.engine` (run now, retry, cancel) or the
model (`Job.set_active`, `Job.duplicate`, `Job.save()`, which recomputes the schedule),
and validation is `Job.clean()` reached through the ModelForm, never a copy of its rules.
Its modules: common (formatting, lean lists, the capped paginator, bulk-action reports),
jobs (JobAdmin, with its form in job_forms, its sections in job_fieldsets, the list's
filter and columns in job_list, the latest runs in job_runs, the actions in job_actions),
runs (JobHistoryAdmin), changes (JobChangeAdmin, the audit trail), scheduler (the pause
switch and its record), teams (the team scoping of the lists and pages above, and the
Teams admin) and tokens (API tokens, for superusers only).

The run table grows without bound, so its pages avoid anything that scales with it:
no full COUNT(*) (a capped count instead), no facet counts, sorting only the newest-first
way the indexes serve, a search that finds the jobs first, and a date hierarchy built
from two index look-ups (jobs/templatetags/jobs_admin.py). `manage.py benchmark
--scenario pages` measures the lists with 10,000 jobs and 1,000,000 runs.
"""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

# Importing the modules registers their ModelAdmins (Django's autodiscovery imports
# this package only).
from jobs.admin import changes, jobs, runs, scheduler, teams, tokens
from jobs.admin.calendars import BlackoutAdmin, CalendarAdmin
from jobs.admin.changes import JobChangeAdmin
from jobs.admin.channels import NotificationChannelAdmin
from jobs.admin.common import LIST_PER_PAGE, CappedCountPaginator
from jobs.admin.jobs import JobAdmin
from jobs.admin.runs import JobHistoryAdmin
from jobs.admin.scheduler import SchedulerEventAdmin, SchedulerStateAdmin

admin.site.site_header = _("Job scheduler")
admin.site.site_title = _("Job scheduler")
admin.site.index_title = _("Console")

__all__ = [
    "LIST_PER_PAGE",
    "BlackoutAdmin",
    "CalendarAdmin",
    "CappedCountPaginator",
    "JobAdmin",
    "JobChangeAdmin",
    "JobHistoryAdmin",
    "NotificationChannelAdmin",
    "SchedulerEventAdmin",
    "SchedulerStateAdmin",
    "changes",
    "jobs",
    "runs",
    "scheduler",
    "teams",
    "tokens",
]
