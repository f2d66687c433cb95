"""`python manage.py syncjobs`: bring the database to the schedules declared in code."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs import codesync

# Exit statuses: 1 when --check finds the database differs from the code, 2 when a
# declaration is wrong (nothing is changed then, with or without --check).
DIFFERS = 1
INVALID = 2


class Command(BaseCommand):
    help = (
        "Create, update in place and deactivate the jobs declared in code "
        "(@register(cron=..., every=... or at=...)) so that the database says what the "
        "code says; prints what it changed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--team",
            metavar="GROUP",
            help="the group (by name) whose team every declared job becomes whose "
            "declaration gives no team=; left out, their team stays as it is",
        )
        modes = parser.add_mutually_exclusive_group()
        modes.add_argument(
            "--dry-run", action="store_true", help="print what would change; change nothing"
        )
        modes.add_argument(
            "--check",
            action="store_true",
            help=f"change nothing; exit {DIFFERS} when the database differs from the code",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        apply = not (options["dry_run"] or options["check"])
        try:
            report = codesync.sync(apply=apply, team=options["team"])
        except codesync.DeclarationError as error:
            raise CommandError(
                f"the schedules in code cannot be synced; nothing was changed:\n{error}",
                returncode=INVALID,
            ) from None
        for line in report.lines():
            self.stdout.write(line)
        if options["check"] and report.differs:
            raise CommandError(
                "the database differs from the code: run manage.py syncjobs",
                returncode=DIFFERS,
            )
