"""`python manage.py backfill JOB --start ... --end ...`: one run per past occurrence of
the range that has none yet (trigger backfill), as POST /api/v1/jobs/<id>/backfill/."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs import engine
from jobs.models import Job, acting


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{text!r} is not an ISO 8601 date and time") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Run a job for a past range: one run per occurrence in [start, end) that has none "
        "yet, in order, through the job's queue (at most JOBS_BACKFILL_MAX_RUNS)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("job", help="the job's id or its name")
        parser.add_argument("--start", required=True, help="ISO 8601; without a zone: UTC")
        parser.add_argument("--end", required=True, help="ISO 8601, in the past")
        parser.add_argument(
            "--dry-run", action="store_true", help="list the occurrences; create nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        job = self._job(options["job"])
        start, end = _moment(options["start"]), _moment(options["end"])
        try:
            if options["dry_run"]:
                found = engine.backfill_occurrences(job, start, end)
                created = []
            else:
                with acting(name="manage.py backfill"):
                    done = engine.backfill(job, start, end)
                found, created = done.occurrences, done.created
        except engine.BackfillRefused as refused:
            raise CommandError(f"--{refused.field}: {refused}") from None
        for at in found:
            mark = "+" if at in created else " "
            self.stdout.write(f"{mark} {at:%Y-%m-%d %H:%M:%S} UTC")
        self.stdout.write(f"{len(created)} runs created for {len(found)} occurrences")

    def _job(self, given: str) -> Job:
        try:
            found = Job.objects.filter(pk=given).first()
        except ValidationError:
            found = None
        found = found or Job.objects.filter(name=given).order_by("created_at").first()
        if found is None:
            raise CommandError(f"no job has the id or name {given!r}")
        return found
