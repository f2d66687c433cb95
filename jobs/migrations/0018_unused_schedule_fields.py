"""The schedule fields a job's type does not use are stored empty (Job.
clear_unused_schedule_fields): a one-off or cron job's interval null and its unit blank,
a cron expression and zone only on cron jobs, no start time on a cron job, and a one-off
job's misfire and overlap policies at their defaults. Rows saved before held whatever
was sent (a one-off job with `interval: 0`, which the API then answered)."""

from django.db import migrations

# As the code stated them when this was written (jobs.models.choices).
ONCE, INTERVAL, CRON = "once", "interval", "cron"
COALESCE, ALLOW = "coalesce", "allow"


def clear_unused_fields(apps, schema_editor):
    Job = apps.get_model("jobs", "Job")
    Job.objects.exclude(schedule_type=INTERVAL).update(interval=None, interval_unit="")
    Job.objects.exclude(schedule_type=CRON).update(cron_expression="", timezone="")
    Job.objects.filter(schedule_type=CRON).update(scheduled_at=None)
    Job.objects.filter(schedule_type=ONCE).update(misfire_policy=COALESCE, overlap_policy=ALLOW)


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0017_run_processes"),
    ]

    operations = [
        # Nothing to undo: the cleared values meant nothing to the scheduler.
        migrations.RunPython(clear_unused_fields, migrations.RunPython.noop),
    ]
