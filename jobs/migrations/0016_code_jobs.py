"""Jobs declared in code (jobs/codesync.py): the declaration's key, unique while set (a
partial unique index, on SQLite and PostgreSQL alike, so that processes syncing at once
make one job per key), the file it is declared in, and the values it last declared; the
audit channel "code" of the changes a sync makes."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0015_scheduler_queues'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='code_declaration',
            field=models.JSONField(blank=True, editable=False, null=True, verbose_name='declared in code'),
        ),
        migrations.AddField(
            model_name='job',
            name='code_key',
            field=models.CharField(blank=True, editable=False, max_length=200, null=True, verbose_name='code key'),
        ),
        migrations.AddField(
            model_name='job',
            name='code_source',
            field=models.CharField(blank=True, db_default='', default='', editable=False, max_length=500, verbose_name='defined in'),
        ),
        migrations.AlterField(
            model_name='jobchange',
            name='channel',
            field=models.CharField(choices=[('dashboard', 'dashboard'), ('admin', 'admin'), ('api', 'API'), ('command', 'command'), ('code', 'code'), ('system', 'system')], max_length=16, verbose_name='channel'),
        ),
        migrations.AlterField(
            model_name='schedulerevent',
            name='channel',
            field=models.CharField(choices=[('dashboard', 'dashboard'), ('admin', 'admin'), ('api', 'API'), ('command', 'command'), ('code', 'code'), ('system', 'system')], max_length=16, verbose_name='channel'),
        ),
        migrations.AlterField(
            model_name='schedulerstate',
            name='channel',
            field=models.CharField(blank=True, choices=[('dashboard', 'dashboard'), ('admin', 'admin'), ('api', 'API'), ('command', 'command'), ('code', 'code'), ('system', 'system')], max_length=16, verbose_name='channel'),
        ),
        migrations.AddConstraint(
            model_name='job',
            constraint=models.UniqueConstraint(condition=models.Q(('code_key__isnull', False)), fields=('code_key',), name='jobs_job_code_key_unique'),
        ),
    ]
