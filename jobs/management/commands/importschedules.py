"""`python manage.py importschedules --from celery-beat|crontab|django-q2 [SOURCE]`: bring
another scheduler's schedules over (docs/migrating.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError

from jobs.imports import sources
from jobs.imports.entries import SourceError
from jobs.imports.plan import ImportRefused, run_import
from jobs.models import teams

# Exit statuses, as syncjobs': 1 when --check finds the jobs differ from the source, 2 when
# the source cannot be read or --strict refuses it (nothing is changed then).
DIFFERS = 1
INVALID = 2


class Command(BaseCommand):
    help = (
        "Create or update in place the jobs of another scheduler's schedules: "
        "django-celery-beat's periodic tasks, a crontab file or django-q2's schedules."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--from", dest="kind", required=True, choices=sources.KINDS)
        parser.add_argument(
            "source",
            nargs="?",
            help="crontab: the file. celery-beat, django-q2: a database URL (like "
            "DATABASE_URL) holding their tables, read by SQL",
        )
        parser.add_argument(
            "--database",
            default="default",
            help="celery-beat, django-q2: the database alias holding their tables "
            "(default: default)",
        )
        modes = parser.add_mutually_exclusive_group()
        modes.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
        modes.add_argument(
            "--check",
            action="store_true",
            help=f"change nothing; exit {DIFFERS} when the jobs differ from the source",
        )
        parser.add_argument(
            "--disable-source",
            action="store_true",
            help="switch the imported entries off in celery beat or django-q2, in the "
            "same transaction",
        )
        parser.add_argument(
            "--enable", action="store_true", help="crontab: enable the shell jobs it makes"
        )
        parser.add_argument(
            "--team",
            metavar="GROUP",
            help="the group (by name) whose team the imported jobs become; left out, an "
            "imported job's team stays as it is",
        )
        parser.add_argument(
            "--strict",
            action="store_true",
            help="stop, changing nothing, when any entry would be skipped",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        team = None
        if options["team"] is not None:
            team = teams.team_named(options["team"])
            if team is None:
                raise CommandError(
                    f"--team names no group: {options['team']!r}; nothing was changed",
                    returncode=INVALID,
                )
        try:
            source = sources.open_source(
                options["kind"],
                options["source"],
                database=options["database"],
                enable=options["enable"],
                disable=options["disable_source"],
            )
            report = run_import(
                source,
                apply=not (options["dry_run"] or options["check"]),
                disable_source=options["disable_source"],
                strict=options["strict"],
                team=team,
            )
        except SourceError as error:
            raise CommandError(f"{error}; nothing was changed", returncode=INVALID) from None
        except ImportRefused as error:
            raise CommandError(
                f"--strict: entries cannot be imported, nothing was changed:\n{error}",
                returncode=INVALID,
            ) from None
        except IntegrityError as error:
            # Job.import_source and import_key are unique together: another import of the
            # same source created one of these jobs since this one read the table.
            raise CommandError(
                f"the database refused the import ({error}); nothing was changed. Another "
                "import of the same source at the same time does this: run it again",
                returncode=INVALID,
            ) from None
        finally:
            sources.close_url_connection()
        for line in report.lines():
            self.stdout.write(line)
        if options["check"] and report.differs:
            raise CommandError(
                "the jobs differ from the source: run manage.py importschedules",
                returncode=DIFFERS,
            )
