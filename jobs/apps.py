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
        from jobs.metrics import checks  # noqa: F401 - registers the deploy checks
        from jobs.queues import checks as queue_checks  # noqa: F401 - registers the checks of the queue settings

        events.on_runs_finished(alerts.runs_finished)
