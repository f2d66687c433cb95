"""A module no test imports by name: the registry must never import it from a job's
command (test_registry)."""

IMPORTED = True


def boom() -> None:  # pragma: no cover - must never run
    raise AssertionError("imported and called from user input")
