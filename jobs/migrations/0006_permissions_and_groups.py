"""The custom permissions run_job and use_shell, and the three groups.

Upgrading keeps what people could do before permissions were checked: existing staff
users join "Job admins" and every other existing user joins "Job viewers" (they could
change jobs from the dashboard before; an administrator now grants that on purpose).

The groups are written out here rather than imported from jobs.access.permissions: a migration must
do the same thing whenever it runs, whatever the code says later. Later migrations add
the permissions later features bring.
"""

from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.contrib.contenttypes.management import create_contenttypes
from django.db import migrations

GROUPS = {
    "Job viewers": ["view_job"],
    "Job operators": ["view_job", "run_job", "change_job"],
    "Job admins": ["view_job", "add_job", "change_job", "delete_job", "run_job"],
}


def _ensure_permissions_exist(apps):
    # Django creates permissions after the last migration (post_migrate); the groups need
    # them now, on a fresh database too.
    app_config = apps.get_app_config("jobs")
    app_config.models_module = True
    try:
        create_contenttypes(app_config, verbosity=0, apps=apps)
        create_permissions(app_config, verbosity=0, apps=apps)
    finally:
        app_config.models_module = None


def make_groups(apps, schema_editor):
    _ensure_permissions_exist(apps)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    groups = {}
    for name, codenames in GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label="jobs", codename__in=codenames)
        )
        groups[name] = group
    # A custom user model without is_staff or groups has nothing to carry over.
    if hasattr(User, "is_staff") and hasattr(User, "groups"):
        for user in User.objects.all():
            user.groups.add(groups["Job admins" if user.is_staff else "Job viewers"])


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0005_merge_0004_alerts_metrics_0004_scheduling_power"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="job",
            options={
                "ordering": ["name"],
                "permissions": [
                    ("run_job", "Can run jobs now, retry runs and cancel runs"),
                    ("use_shell", "Can create or change jobs that run shell commands"),
                ],
                "verbose_name": "job",
                "verbose_name_plural": "jobs",
            },
        ),
        migrations.RunPython(make_groups, remove_groups),
    ]
