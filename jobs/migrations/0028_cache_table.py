"""The table of the database cache (jobs.conf.CACHE_TABLE) that the standalone site's
shared counts live in: the API's throttles and password-reset requests, the same for
every web process (docs/permissions.md: "Logins and throttling").

Made by Django's own createcachetable code, so it is the table DatabaseCache expects on
SQLite, PostgreSQL and MySQL/MariaDB; it exists after `migrate` whatever CACHES says, so
that a site may switch to the database cache without another step.
"""

from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations

TABLE = "jobs_cache"


def create_table(apps, schema_editor):
    # Skips a table that already exists (a project that ran createcachetable itself).
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, TABLE, dry_run=False)


def drop_table(apps, schema_editor):
    if TABLE in schema_editor.connection.introspection.table_names():
        schema_editor.execute(f"DROP TABLE {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):
    dependencies = [("jobs", "0027_api_tokens")]

    # Not atomic: MySQL/MariaDB cannot roll DDL back, and Django refuses a schema editor's
    # DROP TABLE inside the transaction it would otherwise open around this operation.
    operations = [migrations.RunPython(create_table, drop_table, atomic=False, elidable=False)]
