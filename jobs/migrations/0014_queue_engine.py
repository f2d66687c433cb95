from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0013_run_queues"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="jobhistory",
            index=models.Index(
                condition=models.Q(("status", "pending")),
                fields=["queue", "-priority", "not_before"],
                name="jobs_run_pending_queue",
            ),
        ),
    ]
