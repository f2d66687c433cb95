"""The pause switch of the whole scheduler (SchedulerState, with the permission
pause_scheduler, given to "Job admins"), its site-wide record (SchedulerEvent) and the
scheduler-down incident row (SchedulerHealth).

The group is named here rather than taken from jobs.access.permissions: a migration must do the same
thing whenever it runs, whatever the code says later.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.contrib.contenttypes.management import create_contenttypes
from django.db import migrations, models

GRANTED_TO = "Job admins"
PERMISSION = "pause_scheduler"


def grant_pause(apps, schema_editor):
    # Django creates permissions after the last migration (post_migrate); the group
    # needs this one now, on a fresh database too.
    app_config = apps.get_app_config("jobs")
    app_config.models_module = True
    try:
        create_contenttypes(app_config, verbosity=0, apps=apps)
        create_permissions(app_config, verbosity=0, apps=apps)
    finally:
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GRANTED_TO)
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="jobs", codename=PERMISSION)
    )


def revoke_pause(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    Permission.objects.filter(content_type__app_label="jobs", codename=PERMISSION).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0010_chains'),
        ('auth', '0012_alter_user_first_name_max_length'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='SchedulerHealth',
            fields=[
                ('id', models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False)),
                ('down_since', models.DateTimeField(blank=True, null=True, verbose_name='down since')),
                ('reason', models.CharField(blank=True, max_length=500, verbose_name='reason')),
                ('recovered_at', models.DateTimeField(blank=True, null=True, verbose_name='recovered at')),
            ],
            options={
                'verbose_name': 'scheduler health',
                'verbose_name_plural': 'scheduler health',
                'default_permissions': (),
                'constraints': [models.CheckConstraint(condition=models.Q(('id', 1)), name='jobs_scheduler_health_one_row')],
            },
        ),
        migrations.CreateModel(
            name='SchedulerEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('action', models.CharField(choices=[('pause', 'paused'), ('resume', 'resumed'), ('down', 'noticed down'), ('recovered', 'recovered')], max_length=16, verbose_name='action')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='when')),
                ('username', models.CharField(blank=True, max_length=150, verbose_name='username')),
                ('channel', models.CharField(choices=[('dashboard', 'dashboard'), ('admin', 'admin'), ('api', 'API'), ('command', 'command'), ('system', 'system')], max_length=16, verbose_name='channel')),
                ('note', models.CharField(blank=True, max_length=500, verbose_name='note')),
                ('paused_until', models.DateTimeField(blank=True, null=True, verbose_name='paused until')),
                ('delivery', models.CharField(blank=True, max_length=500, verbose_name='alerts')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'verbose_name': 'scheduler event',
                'verbose_name_plural': 'scheduler events',
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['created_at'], name='jobs_scheduler_event_recent')],
                'constraints': [models.CheckConstraint(condition=models.Q(('action__in', ['pause', 'resume', 'down', 'recovered'])), name='jobs_scheduler_event_action')],
            },
        ),
        migrations.CreateModel(
            name='SchedulerState',
            fields=[
                ('id', models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False)),
                ('paused_at', models.DateTimeField(blank=True, null=True, verbose_name='paused since')),
                ('paused_until', models.DateTimeField(blank=True, null=True, verbose_name='paused until')),
                ('note', models.CharField(blank=True, max_length=500, verbose_name='note')),
                ('paused_by_name', models.CharField(blank=True, max_length=150, verbose_name='paused by')),
                ('channel', models.CharField(blank=True, choices=[('dashboard', 'dashboard'), ('admin', 'admin'), ('api', 'API'), ('command', 'command'), ('system', 'system')], max_length=16, verbose_name='channel')),
                ('resumed_at', models.DateTimeField(blank=True, null=True, verbose_name='resumed at')),
                ('paused_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='paused by')),
            ],
            options={
                'verbose_name': 'scheduler switch',
                'verbose_name_plural': 'scheduler switch',
                'permissions': [('pause_scheduler', 'Can pause and resume the whole scheduler')],
                'default_permissions': (),
                'constraints': [models.CheckConstraint(condition=models.Q(('id', 1)), name='jobs_scheduler_state_one_row'), models.CheckConstraint(condition=models.Q(('paused_until__isnull', True), ('paused_at__isnull', False), _connector='OR'), name='jobs_scheduler_until_needs_pause')],
            },
        ),
        migrations.RunPython(grant_pause, revoke_pause),
    ]
