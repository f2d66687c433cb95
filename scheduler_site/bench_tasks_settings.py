"""Settings for benchmarks/tasks_backend.py: the site's, with django-tasks' own database
backend beside the scheduler's ("db" in TASKS, its app installed), so that both run on
the same database in the same run. Nothing else uses them."""

from scheduler_site.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "django_tasks_db"]  # noqa: F405
TASKS = {**TASKS, "db": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": []}}  # noqa: F405
