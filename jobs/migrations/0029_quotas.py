"""Quotas: the timeout's help text says what a blank one means for shell and management
command jobs (JOBS_SHELL_DEFAULT_TIMEOUT, at most JOBS_SHELL_MAX_TIMEOUT). No schema change."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0028_cache_table"),
    ]

    operations = [
        migrations.AlterField(
            model_name="job",
            name="timeout_seconds",
            field=models.IntegerField(
                blank=True,
                help_text=(
                    "A run still going after this long is stopped and fails. Blank: no "
                    "limit; for shell and management command jobs, the site's default "
                    "(JOBS_SHELL_DEFAULT_TIMEOUT)."
                ),
                null=True,
                verbose_name="timeout (seconds)",
            ),
        ),
    ]
