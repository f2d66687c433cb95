"""`python manage.py apitoken <username>`: print the user's API token, creating it if needed."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.authtoken.models import Token

from jobs.access.permissions import CHANGE_JOB, VIEW_JOB
from jobs.web.tokens import replace_token


class Command(BaseCommand):
    help = "Print the API token of a user (created on first use). Use it as 'Token <key>'."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--reset",
            action="store_true",
            help="replace the user's token with a new one (the old one stops working)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: options["username"]})
        except User.DoesNotExist:
            raise CommandError(f"no user named {options['username']!r}") from None
        if options["reset"]:
            token = replace_token(user)  # as the dashboard's API token page does
        else:
            token, _ = Token.objects.get_or_create(user=user)
        if not user.has_perm(VIEW_JOB):
            self.stderr.write(
                f"note: {user} has no permission on jobs, so this token is refused everywhere; "
                "add the user to a group (docs/permissions.md: Who can do what)."
            )
        elif not user.has_perm(CHANGE_JOB):
            self.stderr.write(f"note: {user} may not change jobs, so this token can only read.")
        self.stdout.write(token.key)
