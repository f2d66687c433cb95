"""System check of the shell timeouts: JOBS_SHELL_DEFAULT_TIMEOUT, the timeout of a shell or
command run whose job sets none, may not exceed JOBS_SHELL_MAX_TIMEOUT, the most any of
them may have (a default above it would be a promise the executors do not keep)."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, register

from jobs import conf


@register(conf.SETTINGS_CHECKS)
def shell_timeout_settings(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    default, most = conf.shell_default_timeout(), conf.shell_max_timeout()
    if most < 1:
        return [
            Error(
                f"JOBS_SHELL_MAX_TIMEOUT is {most}: every shell and command run would be "
                "stopped at once.",
                hint="Set it to at least 1 second (86400 is a day).",
                id="jobs.E040",
            )
        ]
    if default > most:
        return [
            Error(
                f"JOBS_SHELL_DEFAULT_TIMEOUT ({default} s) is longer than "
                f"JOBS_SHELL_MAX_TIMEOUT ({most} s), the most a shell or command run may take.",
                hint="Lower JOBS_SHELL_DEFAULT_TIMEOUT, or raise JOBS_SHELL_MAX_TIMEOUT.",
                id="jobs.E041",
            )
        ]
    return []
