"""The audit trail of jobs (jobs.models.changes.JobChange): who changed what, when, through
which channel. No foreign key to the job, so a deleted job's records stay."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0006_permissions_and_groups'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='JobChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('job_id', models.UUIDField(verbose_name='job id')),
                ('job_name', models.CharField(max_length=200, verbose_name='job')),
                ('username', models.CharField(blank=True, max_length=150, verbose_name='username')),
                ('channel', models.CharField(choices=[('dashboard', 'dashboard'), ('admin', 'admin'), ('api', 'API'), ('command', 'command'), ('system', 'system')], max_length=16, verbose_name='channel')),
                ('action', models.CharField(choices=[('create', 'created'), ('edit', 'edited'), ('enable', 'enabled'), ('disable', 'disabled'), ('restore', 'restored'), ('delete', 'deleted'), ('run_now', 'run now'), ('retry', 'run retried'), ('cancel', 'run cancelled')], max_length=16, verbose_name='action')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='when')),
                ('changes', models.JSONField(blank=True, default=dict, verbose_name='changes')),
                ('snapshot', models.JSONField(blank=True, null=True, verbose_name='version')),
                ('run_id', models.UUIDField(blank=True, null=True, verbose_name='run id')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'verbose_name': 'job change',
                'verbose_name_plural': 'job changes',
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['job_id', 'created_at'], name='jobs_change_job_recent'), models.Index(fields=['created_at'], name='jobs_change_created')],
            },
        ),
    ]
