"""Who uses the scheduler, defined once: the users the tests act as.

Each persona is a user in the groups the migration makes (jobs.access.permissions:
Job viewers, Job operators, Job admins), or none, or a superuser. A test that needs a
user of its own (a second operator, a name the audit trail shows) passes `name`; the
groups stay the persona's. `signed_in` gives a test client logged in as one.
"""

from __future__ import annotations

from typing import Any

from django.test import Client

from jobs.access.permissions import JOB_ADMINS, JOB_OPERATORS, JOB_VIEWERS, USE_SHELL
from jobs.tests.factories import make_user


def nobody(name: str = "nobody") -> Any:
    """Logged in, in no group: what a new account is until an administrator decides."""
    return make_user(name)


def viewer(name: str = "viewer", *, staff: bool = False) -> Any:
    """Reads every job and run; changes nothing."""
    return make_user(name, JOB_VIEWERS, staff=staff)


def operator(name: str = "operator", *, staff: bool = False) -> Any:
    """Runs, enables and disables jobs, cancels and retries runs."""
    return make_user(name, JOB_OPERATORS, staff=staff)


def job_admin(name: str = "jobadmin", *, staff: bool = False) -> Any:
    """Adds, changes and deletes jobs; not shell jobs or dangerous commands."""
    return make_user(name, JOB_ADMINS, staff=staff)


def shell_admin(name: str = "shelladmin", *, staff: bool = False) -> Any:
    """A job admin who may also make jobs that run shell lines or any command."""
    return make_user(name, JOB_ADMINS, staff=staff, permissions=(USE_SHELL,))


def superuser(name: str = "root") -> Any:
    return make_user(name, superuser=True)


def signed_in(user: Any) -> Client:
    """A test client logged in as `user`."""
    client = Client()
    client.force_login(user)
    return client
