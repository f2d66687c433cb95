"""Schedules declared in code and `manage.py syncjobs`: creating, updating in place,
deactivating, --check and --dry-run in each state, the operator's pause, bad
declarations refused whole, and runscheduler syncing at start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from django.forms.models import model_to_dict
from django.utils import timezone

from jobs import codesync
from jobs.models import ChangeAction, Channel, Job, JobChange, JobHistory
from jobs.pytasks import registry
from jobs.schedules import arithmetic as schedules
from jobs.tests.declaring import TASK, code_job, syncjobs
from jobs.tests.factories import NOW, make_job, make_run

pytestmark = pytest.mark.django_db

# Where the tests' declarations are made (jobs.tests.declaring).
HERE = "jobs/tests/declaring.py"


def table() -> list[dict]:
    """Every job as stored, and the number of audit records: what "nothing changed" keeps."""
    rows = sorted(Job.objects.values(), key=lambda row: str(row["id"]))
    return [*rows, {"changes": JobChange.objects.count()}]


# --- creating, updating, deactivating ------------------------------------------------


def test_syncjobs_creates_a_job_per_declaration_and_says_so(clock, declare):
    report = declare(cron="0 9 * * 1-5", timezone="Asia/Tokyo", key="morning", max_retries=3)
    declare(function=report, every=timedelta(hours=2), key="often", overlap_policy="forbid")

    synced = syncjobs()

    assert synced.status == 0
    assert f"created {TASK}:morning ({HERE})" in synced.output
    assert f"created {TASK}:often ({HERE})" in synced.output
    assert "2 declared in code: 2 created, 0 updated, 0 unchanged, 0 deactivated" in synced.output
    morning = code_job(f"{TASK}:morning")
    assert (morning.name, morning.description) == (f"{TASK}:morning", "Send the report.")
    assert (morning.executor, morning.command, morning.arguments) == ("python", TASK, {})
    assert (morning.schedule_type, morning.cron_expression) == ("cron", "0 9 * * 1-5")
    assert (morning.timezone, morning.max_retries, morning.is_active) == ("Asia/Tokyo", 3, True)
    assert morning.code_source == HERE
    assert morning.declared_in_code
    # 2 March 2026 is a Monday: 09:00 in Tokyo is 00:00 UTC.
    assert morning.next_run_at == datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
    often = code_job(f"{TASK}:often")
    assert (often.interval, often.interval_unit, often.overlap_policy) == (2, "hour", "forbid")
    assert often.next_run_at == NOW + timedelta(hours=2)
    created = JobChange.objects.get(job_id=morning.pk)
    assert (created.action, created.channel, created.username) == (
        ChangeAction.CREATE,
        Channel.CODE,
        "syncjobs",
    )


def test_a_second_sync_changes_nothing(clock, declare):
    declare(every=timedelta(minutes=10), arguments={"day": "monday"})
    syncjobs()
    before = table()

    synced = syncjobs()

    assert "0 created, 0 updated, 1 unchanged, 0 deactivated" in synced.output
    assert table() == before


def test_a_changed_declaration_updates_the_job_in_place_keeping_its_runs_and_history(
    clock, declare
):
    declare(cron="0 9 * * *", max_retries=3)
    syncjobs()
    job = code_job()
    make_run(job)
    clock.shift(timedelta(minutes=5))

    declare(cron="30 18 * * *", timezone="Europe/Berlin", max_retries=3)
    synced = syncjobs()

    assert f"updated {TASK} ({HERE}): cron_expression, timezone" in synced.output
    updated = code_job()
    assert updated.pk == job.pk
    assert JobHistory.objects.filter(job=updated).count() == 1
    # Moved as an edit in the form moves it: the next 18:30 in Berlin (17:30 UTC).
    expected = schedules.CronSchedule("30 18 * * *", "Europe/Berlin").next_after(timezone.now())
    assert updated.next_run_at == expected == datetime(2026, 3, 1, 17, 30, tzinfo=UTC)
    edit = JobChange.objects.filter(job_id=job.pk).order_by("-id").first()
    assert (edit.action, edit.channel) == (ChangeAction.EDIT, Channel.CODE)
    assert edit.username == "syncjobs"
    assert edit.changes == {
        "cron_expression": ["0 9 * * *", "30 18 * * *"],
        "timezone": ["", "Europe/Berlin"],
    }


def test_an_option_taken_out_of_the_declaration_goes_back_to_its_default(clock, declare):
    declare(every=timedelta(minutes=10), timeout_seconds=600, max_retries=2)
    syncjobs()

    declare(every=timedelta(minutes=10), max_retries=2)
    synced = syncjobs()

    assert f"updated {TASK} ({HERE}): timeout_seconds" in synced.output
    job = code_job()
    assert (job.timeout_seconds, job.max_retries) == (None, 2)
    assert "timeout_seconds" not in job.code_fields


def test_a_declaration_gone_deactivates_its_job_and_never_deletes_it(clock, declare):
    declare(every=timedelta(minutes=10))
    syncjobs()
    job = code_job()
    make_run(job)

    registry.unregister(TASK)
    synced = syncjobs()

    assert f"deactivated {TASK} ({HERE}): no longer declared in code" in synced.output
    gone = Job.objects.get(pk=job.pk)
    assert not gone.is_active and gone.next_run_at is None
    assert gone.code_key == TASK and not gone.declared_in_code
    assert gone.code_fields == frozenset()  # the operator's again
    assert JobHistory.objects.filter(job=gone).count() == 1
    assert JobChange.objects.filter(job_id=job.pk).latest("id").action == ChangeAction.DISABLE
    # Said once: the next sync finds nothing to do.
    assert "0 deactivated" in syncjobs().output


def test_a_declaration_that_comes_back_takes_its_job_over_again(clock, declare):
    declare(every=timedelta(minutes=10))
    syncjobs()
    registry.unregister(TASK)
    syncjobs()

    declare(every=timedelta(minutes=10))
    synced = syncjobs()

    assert f"updated {TASK} ({HERE}): is_active" in synced.output
    job = code_job()
    assert job.is_active and job.declared_in_code
    assert Job.objects.count() == 1


def test_jobs_made_on_the_dashboard_are_left_alone(clock, declare):
    mine = make_job(name=TASK)  # even one named like the declared job
    before = model_to_dict(mine)
    declare(every=timedelta(minutes=10))

    syncjobs()
    registry.unregister(TASK)
    syncjobs()

    assert model_to_dict(Job.objects.get(pk=mine.pk)) == before
    assert Job.objects.count() == 2


def test_a_one_off_whose_time_has_passed_is_created_disabled_with_a_note(clock, declare):
    declare(at=NOW - timedelta(days=1))

    synced = syncjobs()

    assert "(disabled: This time has already passed." in synced.output
    job = code_job()
    assert not job.is_active and job.scheduled_at == NOW - timedelta(days=1)
    assert "unchanged" in syncjobs().output and not syncjobs("--check").status


def test_every_is_read_in_its_largest_whole_unit(clock, declare):
    cases = {
        "tests.every.days": (timedelta(days=2), (2, "day")),
        "tests.every.minutes": (timedelta(minutes=90), (90, "minute")),
        "tests.every.seconds": (timedelta(seconds=45), (45, "second")),
    }
    for name, (every, _expected) in cases.items():
        declare(name=name, every=every)

    syncjobs()

    for name, (_every, expected) in cases.items():
        job = code_job(name)
        assert (job.interval, job.interval_unit) == expected


def test_at_keeps_its_zone_and_arguments_are_bound_to_the_signature(clock, declare):
    at = datetime(2026, 12, 1, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
    declare(at=at, arguments={"count": "3"})
    syncjobs()

    job = code_job()
    assert job.scheduled_at == at and job.next_run_at == at
    assert job.arguments == {"count": 3}  # normalised as the form would store it
    assert "unchanged" in syncjobs().output


# --- is_active: the operator's ---------------------------------------------------------


def test_an_operators_pause_stays_until_the_code_changes_that_job(clock, declare):
    declare(every=timedelta(minutes=10))
    syncjobs()
    code_job().set_active(False)

    assert "1 unchanged" in syncjobs().output
    assert not code_job().is_active
    assert syncjobs("--check").status == 0  # a pause is no difference from the code

    declare(every=timedelta(minutes=20))
    assert f"updated {TASK} ({HERE}): interval, is_active" in syncjobs().output
    assert code_job().is_active


def test_a_new_description_alone_keeps_the_operators_pause(clock, declare):
    declare(every=timedelta(minutes=10))
    syncjobs()
    code_job().set_active(False)

    declare(every=timedelta(minutes=10), description="Send the weekly report.")
    assert f"updated {TASK} ({HERE}): description" in syncjobs().output

    job = code_job()
    assert (job.description, job.is_active) == ("Send the weekly report.", False)
    assert "1 unchanged" in syncjobs().output


def test_a_job_declared_inactive_is_created_so_and_may_be_enabled(clock, declare):
    declare(every=timedelta(minutes=10), is_active=False)
    syncjobs()
    assert not code_job().is_active

    code_job().set_active(True)
    syncjobs()
    assert code_job().is_active


# --- --check and --dry-run -------------------------------------------------------------


def test_check_says_whether_the_database_differs_from_the_code_in_each_state(clock, declare):
    declare(every=timedelta(minutes=10))
    assert syncjobs("--check").status == 1  # to create
    syncjobs()
    assert syncjobs("--check").status == 0

    declare(every=timedelta(minutes=15))
    checked = syncjobs("--check")
    assert checked.status == 1  # to update
    assert f"would update {TASK} ({HERE}): interval" in checked.output
    assert "the database differs from the code" in checked.output
    syncjobs()
    assert syncjobs("--check").status == 0

    registry.unregister(TASK)
    assert syncjobs("--check").status == 1  # to deactivate
    syncjobs()
    assert syncjobs("--check").status == 0


def test_check_and_dry_run_change_nothing_in_each_state(clock, declare):
    def unchanged_by_dry_runs() -> str:
        before = table()
        dry = syncjobs("--dry-run")
        assert dry.status == 0
        assert syncjobs("--check").status == 1
        assert table() == before
        return dry.output

    declare(every=timedelta(minutes=10))
    assert f"would create {TASK} ({HERE})" in unchanged_by_dry_runs()
    assert not Job.objects.exists()
    syncjobs()

    declare(every=timedelta(minutes=15))
    assert f"would update {TASK} ({HERE}): interval" in unchanged_by_dry_runs()
    syncjobs()

    registry.unregister(TASK)
    output = unchanged_by_dry_runs()
    assert f"would deactivate {TASK} ({HERE}): no longer declared in code" in output
    assert "dry run, nothing changed: 0 declared in code" in output


# --- bad declarations ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "says"),
    [
        ({"max_retries": 3}, "No schedule: give one of cron=, every= and at="),
        ({"cron": "* * * * *", "every": timedelta(minutes=1)}, "Two schedules (cron= and every=)"),
        ({"cron": "61 * * * *"}, "cron: The minute field “61” is not valid."),
        ({"cron": "0 9 * * *", "timezone": "Asia/Tokio"}, "timezone: Unknown time zone"),
        ({"every": timedelta(minutes=1), "timezone": "UTC"}, "timezone= goes with cron= only"),
        ({"every": 600}, "every= takes a timedelta"),
        ({"every": timedelta(milliseconds=1500)}, "every= must be a whole number of seconds"),
        ({"at": datetime(2030, 1, 1)}, "at= must be an aware datetime"),
        ({"every": timedelta(minutes=1), "colour": "red"}, "“colour” is not a job option."),
        ({"every": timedelta(minutes=1), "max_retries": 50}, "max_retries: Ensure this value"),
        ({"every": timedelta(minutes=1), "max_retries": "three"}, "max_retries: “three” value"),
        ({"every": timedelta(minutes=1), "overlap_policy": "sometimes"}, "overlap_policy: Value"),
        ({"every": timedelta(minutes=1), "arguments": {"nope": 1}}, "arguments: nope:"),
        ({"every": timedelta(minutes=1), "command": "ls"}, "command= cannot be given"),
        ({"every": timedelta(minutes=1), "interval": 5}, "interval= cannot be given"),
        ({"every": timedelta(minutes=1), "webhook_secret": "whsec_x"}, "keep secrets out"),
        ({"every": timedelta(minutes=1), "timeout_seconds": {1, 2}}, "cannot be stored"),
        ({"every": timedelta(minutes=1), "key": "no spaces"}, "key= must be a short word"),
    ],
)
def test_a_bad_declaration_stops_the_sync_naming_the_function_and_changes_nothing(
    clock, declare, words, says
):
    declare(name="tests.good", every=timedelta(minutes=5))
    syncjobs()
    declare(name="tests.good", every=timedelta(minutes=7))  # a change the sync would make
    before = table()

    bad = declare(**words)
    synced = syncjobs()

    assert synced.status == 2
    assert "nothing was changed" in synced.output
    assert f"{bad.__module__}.{bad.__qualname__} ({HERE}" in synced.output
    assert says in synced.output
    assert table() == before
    assert syncjobs("--check").status == 2  # --check says so too, with the same words


def test_two_declarations_with_one_key_are_refused(clock, declare):
    report = declare(every=timedelta(minutes=5), key="often")
    declare(function=report, every=timedelta(minutes=6), key="often")

    synced = syncjobs()

    assert synced.status == 2
    assert f"2 schedules of the task {TASK} have the key “often”" in synced.output
    assert not Job.objects.exists()

    registry.unregister(TASK)
    report = declare(every=timedelta(minutes=5))
    declare(function=report, cron="0 * * * *")
    assert f"2 schedules of the task {TASK} have no key=" in syncjobs().output
    assert not Job.objects.exists()


def test_a_task_module_that_fails_to_import_stops_the_sync(clock, declare, settings):
    declare(every=timedelta(minutes=5))
    syncjobs()
    registry.unregister(TASK)  # as if its module were the one that failed
    settings.JOBS_TASK_MODULES = [*settings.JOBS_TASK_MODULES, "jobs.tests.no_such_module"]
    registry.discover(force=True)
    try:
        synced = syncjobs()
    finally:
        settings.JOBS_TASK_MODULES = settings.JOBS_TASK_MODULES[:-1]
        registry.discover(force=True)

    assert synced.status == 2
    assert "jobs.tests.no_such_module" in synced.output
    assert code_job().is_active  # not deactivated for a module that could not be read


# --- concurrency: an insert that meets another process's row ----------------------------


def test_an_insert_that_meets_a_row_another_sync_made_updates_that_row(clock, declare):
    declare(every=timedelta(minutes=5))
    (declaration,) = codesync.checked_declarations()
    planned_before_the_other = codesync._plan(declaration, None)
    syncjobs()  # the other process, faster
    declare(every=timedelta(minutes=6))
    (declaration,) = codesync.checked_declarations()
    planned_before_the_other = planned_before_the_other._replace(declaration=declaration)

    with transaction.atomic():
        change = codesync._apply(planned_before_the_other)

    assert change.action == codesync.UPDATE
    assert Job.objects.count() == 1
    assert code_job().interval == 6


# --- runscheduler ---------------------------------------------------------------------


def test_runscheduler_syncs_as_it_starts_with_jobs_sync_on_start(declare, settings, instant):
    settings.JOBS_SYNC_ON_START = True
    declare(every=timedelta(minutes=10))

    call_command("runscheduler", "--once", "--workers", "1", stdout=StringIO())

    job = code_job()
    assert JobChange.objects.get(job_id=job.pk).username == "runscheduler"


def test_runscheduler_does_not_sync_with_jobs_sync_on_start_off(declare, settings, instant):
    settings.JOBS_SYNC_ON_START = False
    declare(every=timedelta(minutes=10))

    call_command("runscheduler", "--once", "--workers", "1", stdout=StringIO())

    assert not Job.objects.exists()


def test_runscheduler_does_not_start_on_a_bad_declaration(declare, settings, instant):
    settings.JOBS_SYNC_ON_START = True
    bad = declare(cron="61 * * * *")

    with pytest.raises(CommandError) as refused:
        call_command("runscheduler", "--once", "--workers", "1", stdout=StringIO())

    assert "not starting" in str(refused.value)
    assert f"{bad.__module__}.{bad.__qualname__}" in str(refused.value)
    assert not Job.objects.exists()
