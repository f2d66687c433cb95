"""The connection options of a MySQL 8.0+ or MariaDB 10.6+ database (docs/mysql.md)."""

from __future__ import annotations

from typing import Any


def mysql_settings(database: dict[str, Any]) -> list[str]:
    """Set `database`'s OPTIONS and TEST for MySQL; the system checks to silence.

    READ COMMITTED: a claim sees the latest commits at each statement and locks only the
    rows it reads (InnoDB's REPEATABLE READ reads its first snapshot and locks gaps).
    utf8mb4: a four-byte character (an emoji) in a log or a name. The session in UTC,
    whatever the server's zone, so that no zone tables are needed. The test database is
    case-insensitive, as Django's icontains (the searches) expects of MySQL.
    """
    database["OPTIONS"] = {
        "charset": "utf8mb4",
        "isolation_level": "read committed",
        "init_command": "SET time_zone = '+00:00'",
    }
    database["TEST"] = {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"}
    # models.W036/W037: Django leaves the condition of partial indexes (and of unique
    # constraints) out on MySQL; migration 0023_mysql_indexes builds what serves the same
    # statements there.
    return ["models.W036", "models.W037"]
