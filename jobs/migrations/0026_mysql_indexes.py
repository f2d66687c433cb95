"""MySQL and MariaDB have no partial indexes, and Django builds the partial indexes of the
models there as whole indexes without their condition (and leaves out a unique
constraint with a condition). On those servers this migration rebuilds them, under the
same names, so they serve the same statements:

- the pending, running and failed indexes of runs lead with `status`: the statements'
  `status = ...` then ranges over exactly the rows the partial index holds elsewhere
  (the index holds every run, so it costs every write of a run; the reads cost the same);
- jobs_job_due leads with `is_active`, likewise;
- jobs_job_code_key_unique and jobs_job_import_key_unique are plain unique indexes
  (code_key; import_source, import_key): a unique index there lets any number of rows
  with a NULL key be, which is what their condition `... IS NOT NULL` says.

On SQLite and PostgreSQL it does nothing. Keeping the names lets a later migration that
removes or changes one of these indexes run on every database.
"""

from django.db import migrations

# Each table's indexes as Django built them on MySQL, and as this migration makes them.
DJANGO_BUILT = {
    "jobs_job": {"jobs_job_due": "(next_run_at)"},
    "jobs_jobhistory": {
        "jobs_run_pending_ready": "(not_before)",
        "jobs_run_pending_queue": "(queue, priority DESC, not_before)",
        "jobs_run_running_heartbeat": "(heartbeat_at)",
        "jobs_run_failed_recent": "(created_at DESC)",
    },
}
LEADING_WITH_THE_CONDITION = {
    "jobs_job": {"jobs_job_due": "(is_active, next_run_at)"},
    "jobs_jobhistory": {
        "jobs_run_pending_ready": "(status, not_before)",
        "jobs_run_pending_queue": "(status, queue, priority DESC, not_before)",
        "jobs_run_running_heartbeat": "(status, heartbeat_at)",
        "jobs_run_failed_recent": "(status, created_at DESC)",
    },
}
# The unique constraints with a condition, which Django leaves out on MySQL.
UNIQUE_WHERE_SET = {
    "jobs_job_code_key_unique": "(code_key)",
    "jobs_job_import_key_unique": "(import_source, import_key)",
}


def _rebuild(schema_editor, indexes: dict[str, dict[str, str]]) -> None:
    quote = schema_editor.quote_name
    for table, columns_by_name in indexes.items():
        changes = []
        for name, columns in columns_by_name.items():
            changes += [f"DROP INDEX {quote(name)}", f"ADD INDEX {quote(name)} {columns}"]
        schema_editor.execute(f"ALTER TABLE {quote(table)} {', '.join(changes)}")


def for_mysql(apps, schema_editor):
    if schema_editor.connection.vendor != "mysql":
        return
    _rebuild(schema_editor, LEADING_WITH_THE_CONDITION)
    for name, columns in UNIQUE_WHERE_SET.items():
        quoted = schema_editor.quote_name(name)
        schema_editor.execute(f"ALTER TABLE jobs_job ADD UNIQUE INDEX {quoted} {columns}")


def back_as_django_built_them(apps, schema_editor):
    if schema_editor.connection.vendor != "mysql":
        return
    for name in UNIQUE_WHERE_SET:
        schema_editor.execute(f"ALTER TABLE jobs_job DROP INDEX {schema_editor.quote_name(name)}")
    _rebuild(schema_editor, DJANGO_BUILT)


class Migration(migrations.Migration):
    dependencies = [("jobs", "0025_calendars")]

    # Not atomic: MySQL commits each DDL statement (Django refuses DDL in a transaction there).
    operations = [migrations.RunPython(for_mysql, back_as_django_built_them, atomic=False)]
