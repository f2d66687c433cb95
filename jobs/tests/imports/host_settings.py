"""A project that runs django-celery-beat and django-q2: `migrate` with these settings
makes their real tables in the SQLite file SOURCE_DB names (jobs/tests/imports/conftest.py),
which the import tests then read as another team's database."""

import os

SECRET_KEY = "test-only-host-project-key"
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = ["django.contrib.contenttypes", "django_celery_beat", "django_q"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["SOURCE_DB"]}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# django-q2 warns unless retry exceeds timeout; nothing runs here.
Q_CLUSTER = {"name": "host", "orm": "default", "timeout": 60, "retry": 120}
