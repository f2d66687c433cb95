"""`python manage.py apitoken <username> --name NAME [--days N] [--team T] [--read-only]`:
make a named API token of the user and print it, once (the database keeps only its hash)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone

from jobs.access.permissions import CHANGE_JOB, VIEW_JOB
from jobs.models import ApiToken, Channel, acting, issue_token, revoke_token


class Command(BaseCommand):
    help = (
        "Make a named API token of a user and print it once. Use it as 'Token <key>'. "
        "Without --name each call makes a new token named 'command' and the time; "
        "--reset first revokes the user's token of that --name."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default=None, help="the token's name (unique per user)")
        parser.add_argument(
            "--days",
            type=int,
            default=None,
            help="days until it expires (default and most: JOBS_TOKEN_MAX_DAYS)",
        )
        parser.add_argument(
            "--team", default=None, help="scope the token to this team (a group name)"
        )
        parser.add_argument("--read-only", action="store_true", help="the token may only read")
        parser.add_argument(
            "--reset",
            action="store_true",
            help="revoke the user's token of that name first (it stops working at once)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: options["username"]})
        except User.DoesNotExist:
            raise CommandError(f"no user named {options['username']!r}") from None
        team = None
        if options["team"]:
            team = Group.objects.filter(name=options["team"]).first()
            if team is None:
                raise CommandError(f"no team named {options['team']!r}")
        name = options["name"]
        if name is None:
            if options["reset"]:
                raise CommandError("--reset needs the --name of the token to replace")
            name = _new_command_name(user)
        if not options["reset"] and ApiToken.objects.filter(user=user, name=name).exists():
            # The secret of a token is never stored, so it cannot be printed again.
            raise CommandError(
                f"{user} already has a token named {name!r} (it cannot be shown again): "
                "choose another --name, or --reset to revoke it and make a new one"
            )
        with acting(channel=Channel.COMMAND, name="apitoken"), transaction.atomic():
            if options["reset"]:
                # A revoked token keeps its row (and name) for the record: rename it.
                for old in ApiToken.objects.filter(user=user, name=name).select_related("user"):
                    revoke_token(old)
                    old.name = f"{name} (revoked {timezone.now():%Y-%m-%d %H:%M:%S})"[:100]
                    old.save(update_fields=["name"])
            try:
                issued = issue_token(
                    user, name, options["days"], team=team, read_only=options["read_only"]
                )
            except ValidationError as error:
                raise CommandError(
                    "; ".join(f"{field}: {' '.join(m)}" for field, m in error.message_dict.items())
                ) from None
        if not user.has_perm(VIEW_JOB):
            self.stderr.write(
                f"note: {user} has no permission on jobs, so this token is refused everywhere; "
                "add the user to a group (docs/permissions.md: Who can do what)."
            )
        elif not user.has_perm(CHANGE_JOB) or options["read_only"]:
            self.stderr.write(
                f"note: {user} may not change jobs with it, so this token can only read."
            )
        self.stdout.write(issued.text)


def _new_command_name(user: Any) -> str:
    """A name no token of the user has: 'command' and the time (so that the quick start's
    TOKEN=$(scripts/manage apitoken admin) makes a token each time it is run)."""
    base = f"command {timezone.now():%Y-%m-%d %H:%M:%S}"
    taken = set(
        ApiToken.objects.filter(user=user, name__startswith=base).values_list("name", flat=True)
    )
    number = 1
    name = base
    while name in taken:
        number += 1
        name = f"{base} ({number})"
    return name
