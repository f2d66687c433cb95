"""A project that runs django-celery-beat and django-q2: `migrate` with these settings
makes their real tables in the database SOURCE_DB names, a SQLite file or a URL
(jobs/tests/imports/conftest.py), which the import tests then read as another team's."""

import os

SECRET_KEY = "test-only-host-project-key"
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = ["django.contrib.contenttypes", "django_celery_beat", "django_q"]
# A SQLite file's path, or a database URL (a private PostgreSQL database).
if "://" in os.environ["SOURCE_DB"]:
    import dj_database_url

    DATABASES = {"default": dj_database_url.parse(os.environ["SOURCE_DB"])}
else:
    DATABASES = {
        "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["SOURCE_DB"]}
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# django-q2 warns unless retry exceeds timeout; nothing runs here.
Q_CLUSTER = {"name": "host", "orm": "default", "timeout": 60, "retry": 120}
