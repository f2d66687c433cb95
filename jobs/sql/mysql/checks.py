"""System checks of a MySQL or MariaDB server: one too old for the claim (no SKIP LOCKED)
or a database that cannot hold four-byte UTF-8 stops runscheduler at start, with what
to change, before anything runs. Nothing is checked on the other databases."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from django.core.checks import Error, register
from django.db import connection

from jobs import conf

# SKIP LOCKED came with MySQL 8.0.1 and MariaDB 10.6.
OLDEST_MYSQL = (8, 0, 1)
OLDEST_MARIADB = (10, 6, 0)


class Server(NamedTuple):
    version: str  # as VERSION() says it: "10.11.6-MariaDB-0+deb12u1", "8.0.36"
    database_charset: str
    connection_charset: str


def problems(server: Server) -> list[Error]:
    """What keeps the scheduler from running on this server, as system check errors."""
    errors = []
    mariadb = "mariadb" in server.version.lower()
    numbers = tuple(int(part) for part in re.findall(r"\d+", server.version)[:3])
    oldest = OLDEST_MARIADB if mariadb else OLDEST_MYSQL
    if numbers < oldest:
        name = "MariaDB" if mariadb else "MySQL"
        errors.append(
            Error(
                f"The database server is {name} {server.version}, which has no "
                "SELECT ... FOR UPDATE SKIP LOCKED: several schedulers could not share "
                "the work without waiting on each other.",
                hint="Upgrade to MySQL 8.0.1 or later, or MariaDB 10.6 or later.",
                id="jobs.E020",
            )
        )
    for what, charset in (
        ("database", server.database_charset),
        ("connection", server.connection_charset),
    ):
        if charset != "utf8mb4":
            errors.append(
                Error(
                    f"The {what}'s character set is {charset}, not utf8mb4: a log or a "
                    "name with a four-byte character (an emoji) could not be stored.",
                    hint=(
                        "ALTER DATABASE <name> CHARACTER SET utf8mb4 COLLATE "
                        "utf8mb4_unicode_ci (and convert its tables), and keep "
                        "OPTIONS charset utf8mb4 in the database settings."
                    ),
                    id="jobs.E021",
                )
            )
    return errors


def read_server() -> Server:
    with connection.cursor() as cursor:
        cursor.execute("SELECT VERSION(), @@character_set_database, @@character_set_connection")
        return Server(*cursor.fetchone())


@register(conf.SETTINGS_CHECKS)
def mysql_server(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    if connection.vendor != "mysql":
        return []
    return problems(read_server())
