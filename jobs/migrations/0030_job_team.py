"""Teams: Job.team (a Django group, blank: the site's) and Team, the marker that makes a
group a team (jobs.models.teams)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("jobs", "0029_quotas"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="team",
            field=models.ForeignKey(
                blank=True,
                help_text="Blank: the site's, seen by everyone who may see jobs.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="jobs",
                to="auth.group",
                verbose_name="team",
            ),
        ),
        migrations.CreateModel(
            name="Team",
            fields=[
                (
                    "group",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        serialize=False,
                        to="auth.group",
                        verbose_name="group",
                    ),
                ),
                (
                    "grants_for",
                    models.ForeignKey(
                        blank=True,
                        help_text="Blank: the group's own jobs (the jobs whose team it is).",
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="team_roles",
                        to="auth.group",
                        verbose_name="grants for the jobs of",
                    ),
                ),
            ],
            options={"verbose_name": "team", "verbose_name_plural": "teams"},
        ),
    ]
