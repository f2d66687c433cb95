"""Create an admin user with a random password when no user exists, and print it once."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the first admin user (random password, printed once) if there is no user."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--username", default="admin")

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        if User.objects.exists():
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser(options["username"], "", password)
        self.stdout.write(
            self.style.SUCCESS(
                f"Created the admin user {options['username']!r} with password: {password}\n"
                "It is shown only this once; change it in the admin."
            )
        )
