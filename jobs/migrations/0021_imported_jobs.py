# Jobs imported by manage.py importschedules: their source, key and record; the "import" channel.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0020_celery_kind"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="import_key",
            field=models.CharField(
                blank=True, editable=False, max_length=200, null=True, verbose_name="import key"
            ),
        ),
        migrations.AddField(
            model_name="job",
            name="import_record",
            field=models.JSONField(
                blank=True, editable=False, null=True, verbose_name="as imported"
            ),
        ),
        migrations.AddField(
            model_name="job",
            name="import_source",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                editable=False,
                max_length=500,
                verbose_name="imported from",
            ),
        ),
        migrations.AlterField(
            model_name="jobchange",
            name="channel",
            field=models.CharField(
                choices=[
                    ("dashboard", "dashboard"),
                    ("admin", "admin"),
                    ("api", "API"),
                    ("command", "command"),
                    ("code", "code"),
                    ("import", "import"),
                    ("system", "system"),
                ],
                max_length=16,
                verbose_name="channel",
            ),
        ),
        migrations.AlterField(
            model_name="schedulerevent",
            name="channel",
            field=models.CharField(
                choices=[
                    ("dashboard", "dashboard"),
                    ("admin", "admin"),
                    ("api", "API"),
                    ("command", "command"),
                    ("code", "code"),
                    ("import", "import"),
                    ("system", "system"),
                ],
                max_length=16,
                verbose_name="channel",
            ),
        ),
        migrations.AlterField(
            model_name="schedulerstate",
            name="channel",
            field=models.CharField(
                blank=True,
                choices=[
                    ("dashboard", "dashboard"),
                    ("admin", "admin"),
                    ("api", "API"),
                    ("command", "command"),
                    ("code", "code"),
                    ("import", "import"),
                    ("system", "system"),
                ],
                max_length=16,
                verbose_name="channel",
            ),
        ),
        migrations.AddConstraint(
            model_name="job",
            constraint=models.UniqueConstraint(
                condition=models.Q(("import_key__isnull", False)),
                fields=("import_source", "import_key"),
                name="jobs_job_import_key_unique",
            ),
        ),
    ]
