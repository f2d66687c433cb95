"""API tokens: named, hashed, expiring (jobs.models.tokens), and the keys of
rest_framework.authtoken moved in.

Each old key becomes a token named "migrated" of its user: prefix its first 8
characters, the SHA-256 of the key, expiring 90 days from now. The old rows are then
deleted, so the database holds no usable key: the old key keeps working (by its hash)
until it expires. Going back restores no key (there is none left to restore).
"""

import datetime
import hashlib

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

LEGACY_DAYS = 90
HAS_AUTHTOKEN = "rest_framework.authtoken" in settings.INSTALLED_APPS


def move_authtoken_keys(apps, schema_editor):
    if not HAS_AUTHTOKEN:
        return
    Token = apps.get_model("authtoken", "Token")
    ApiToken = apps.get_model("jobs", "ApiToken")
    now = django.utils.timezone.now()
    moved = [
        ApiToken(
            user_id=old.user_id,
            name="migrated",
            prefix=old.key[:8],
            key_hash=hashlib.sha256(old.key.encode()).hexdigest(),
            created_at=old.created,
            expires_at=now + datetime.timedelta(days=LEGACY_DAYS),
        )
        for old in Token.objects.all()
    ]
    ApiToken.objects.bulk_create(moved, batch_size=500)
    Token.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("jobs", "0026_mysql_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ] + ([("authtoken", "0004_alter_tokenproxy_options")] if HAS_AUTHTOKEN else [])

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100, verbose_name="name")),
                ("prefix", models.CharField(db_index=True, max_length=8, verbose_name="prefix")),
                ("key_hash", models.CharField(max_length=64, verbose_name="key hash")),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, verbose_name="created"),
                ),
                ("expires_at", models.DateTimeField(verbose_name="expires")),
                (
                    "last_used_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="last used"),
                ),
                ("revoked_at", models.DateTimeField(blank=True, null=True, verbose_name="revoked")),
                ("read_only", models.BooleanField(default=False, verbose_name="read-only")),
            ],
            options={
                "verbose_name": "API token",
                "verbose_name_plural": "API tokens",
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.RemoveConstraint(
            model_name="schedulerevent",
            name="jobs_scheduler_event_action",
        ),
        migrations.AlterField(
            model_name="schedulerevent",
            name="action",
            field=models.CharField(
                choices=[
                    ("pause", "paused"),
                    ("resume", "resumed"),
                    ("down", "noticed down"),
                    ("recovered", "recovered"),
                    ("token_create", "API token created"),
                    ("token_revoke", "API token revoked"),
                ],
                max_length=16,
                verbose_name="action",
            ),
        ),
        migrations.AddConstraint(
            model_name="schedulerevent",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "action__in",
                        ["pause", "resume", "down", "recovered", "token_create", "token_revoke"],
                    )
                ),
                name="jobs_scheduler_event_action",
            ),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="team",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="api_tokens",
                to="auth.group",
                verbose_name="team",
            ),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="user",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="api_tokens",
                to=settings.AUTH_USER_MODEL,
                verbose_name="user",
            ),
        ),
        migrations.AddConstraint(
            model_name="apitoken",
            constraint=models.UniqueConstraint(
                fields=("user", "name"), name="jobs_token_user_name"
            ),
        ),
        migrations.RunPython(move_authtoken_keys, migrations.RunPython.noop),
    ]
