"""`python manage.py prunehistory`: delete the runs and audit records the retention
settings no longer keep."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs.runtime import retention


class Command(BaseCommand):
    help = (
        "Delete finished runs beyond JOBS_HISTORY_KEEP_PER_JOB per job or older than "
        "JOBS_HISTORY_MAX_AGE_DAYS, and audit records older than JOBS_AUDIT_KEEP_DAYS, "
        "a small batch per statement."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would be deleted; delete nothing"
        )
        parser.add_argument(
            "--batch",
            type=int,
            default=retention.DEFAULT_BATCH,
            help=f"rows per DELETE statement (default {retention.DEFAULT_BATCH})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not 1 <= options["batch"] <= 10_000:
            raise CommandError("--batch must be between 1 and 10,000")
        policy = retention.Policy.from_settings()
        if not policy.prunes_runs:
            self.stdout.write(
                "Retention is off (JOBS_HISTORY_KEEP_PER_JOB and JOBS_HISTORY_MAX_AGE_DAYS "
                "are 0): no runs to delete."
            )
        if not policy.enabled:
            self.stdout.write("Audit records are kept forever (JOBS_AUDIT_KEEP_DAYS is 0).")
            return
        stats = retention.prune(batch=options["batch"], dry_run=options["dry_run"], policy=policy)
        verb = "would delete" if options["dry_run"] else "deleted"
        if policy.prunes_runs:
            self.stdout.write(f"{verb} {stats.deleted} runs (keeping {policy})")
        if policy.changes_max_age is not None:
            self.stdout.write(
                f"{verb} {stats.changes_deleted} audit records (keeping {policy.changes_text()})"
            )
        else:
            self.stdout.write("Audit records are kept forever (JOBS_AUDIT_KEEP_DAYS is 0).")
