from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JobsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "jobs"
    verbose_name = _("Job scheduler")

    def ready(self) -> None:
        # The engine emits events; what acts on them subscribes here, so the engine
        # never imports alerting code.
        from jobs import alerts
        from jobs.alerts import checks as alert_checks  # noqa: F401 - registers its checks
        from jobs.engine import events
        from jobs.executors import checks as executor_checks  # noqa: F401 - the shell timeouts
        from jobs.metrics import checks  # noqa: F401 - registers the deploy checks
        from jobs.observability import checks as observability_checks  # noqa: F401 - its extras
        from jobs.queues import checks as queue_checks  # noqa: F401 - registers the checks of the queue settings
        from jobs.sql.mysql import checks as mysql_checks  # noqa: F401 - a MySQL server's checks

        events.on_runs_finished(alerts.runs_finished)
        # A lockout ends the sessions of the user name locked out (jobs/web/lockout_sessions.py),
        # where django-axes is installed.
        from django.apps import apps

        if apps.is_installed("axes"):
            from axes.signals import user_locked_out

            from jobs.web.lockout_sessions import on_user_locked_out

            user_locked_out.connect(on_user_locked_out, dispatch_uid="jobs-end-sessions")
        # The Huey tasks, registered with the project's HUEY so that `run_huey` runs them,
        # only where Huey is installed: a project without it never imports huey or redis.
        # (Huey's own discovery imports each app's `tasks` module; ours is jobs.huey.tasks
        # so that task discovery, jobs.pytasks, does not import it in every project.)
        if apps.is_installed("huey.contrib.djhuey"):
            from jobs.huey import tasks  # noqa: F401 - registers the Huey tasks
