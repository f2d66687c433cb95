"""The scheduler's settings, read through django.conf so tests can override them.

Every setting the app reads that Django does not define has its default in DEFAULTS, so
a project that sets none of them works; `setting(name)` is the one way to read them
(jobs/tests/project/test_packaging.py checks that no module reads one directly). The standalone
site (scheduler_site/settings.py) reads each from the environment; the table of
docs/configuration.md lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches

# The tag of the app's system checks of its settings (jobs.E011 to jobs.E014): the only
# checks `runscheduler` runs as it starts (`manage.py check` and `migrate` run every
# check).
SETTINGS_CHECKS = "jobs_settings"

DEFAULTS: dict[str, Any] = {
    # The scheduler.
    "JOBS_LEASE_SECONDS": 30.0,
    "JOBS_MISFIRE_GRACE_SECONDS": 5.0,
    "JOBS_SHUTDOWN_GRACE_SECONDS": 30.0,
    "JOBS_CLAIM_BATCH": 500,
    "JOBS_BACKFILL_MAX_RUNS": 1000,
    "JOBS_TEAM_SCOPED": "auto",
    "JOBS_EXECUTOR": "jobs.executors.SimulatedExecutor",
    "JOBS_HISTORY_KEEP_PER_JOB": 1000,
    "JOBS_HISTORY_MAX_AGE_DAYS": 30.0,
    "JOBS_PRUNE_INTERVAL_SECONDS": 60.0,
    "JOBS_AUDIT_KEEP_DAYS": 365.0,
    # API tokens: the default and the longest lifetime, in days.
    "JOBS_TOKEN_MAX_DAYS": 90,
    # Queues: how long a queue's oldest ready run may wait before it counts as stalled.
    "JOBS_QUEUE_STALL_SECONDS": 600.0,
    # The simulated executor.
    "JOBS_SIM_MIN_SECONDS": 1.0,
    "JOBS_SIM_MAX_SECONDS": 5.0,
    "JOBS_SIM_FAILURE_RATE": 0.2,
    "JOBS_SIM_SEED": None,
    # Jobs that do real work. The standalone site adds its example tasks
    # (jobs.example_tasks); a project chooses its own modules.
    "JOBS_TASK_MODULES": (),
    "JOBS_MANAGEMENT_COMMANDS": ("clearsessions", "prunehistory", "check"),
    "JOBS_SHELL_ENABLED": False,
    "JOBS_SHELL_HUEY_QUEUE": "",
    "JOBS_SHELL_DEFAULT_TIMEOUT": 3600,
    # Quotas (docs/permissions.md "Quotas"): the longest timeout of a shell or command run,
    # the shortest interval a user without jobs.use_shell may give a job, and the most
    # pending runs started by hand one job may have.
    "JOBS_SHELL_MAX_TIMEOUT": 86400,
    "JOBS_MIN_INTERVAL_SECONDS": 10,
    "JOBS_MAX_PENDING_MANUAL_RUNS": 100,
    "JOBS_KILL_GRACE_SECONDS": 5.0,
    "JOBS_PYTHON_ISOLATION": "thread",
    "JOBS_HTTP_ALLOWED_HOSTS": (),
    "JOBS_HTTP_TIMEOUT_SECONDS": 30.0,
    "JOBS_LOG_MAX_BYTES": 262144,
    # Celery jobs: the app ("": Celery's current app), the wait ("": "result" when the app
    # has a result backend, else "sent"), the most time between two looks at a task, and
    # "ours=theirs" queue names.
    "JOBS_CELERY_APP": "",
    "JOBS_CELERY_WAIT": "",
    "JOBS_CELERY_POLL_SECONDS": 1.0,
    "JOBS_CELERY_QUEUES": (),
    "JOBS_LIVE_LOG_SECONDS": 1.0,
    # Schedules declared in code: runscheduler syncs them as it starts.
    "JOBS_SYNC_ON_START": True,
    # Huey: runs go to Huey workers only when REDIS_URL is set.
    "REDIS_URL": "",
    "JOBS_REDISPATCH_SECONDS": 60.0,
    "JOBS_HUEY_PERIODIC_PASS": False,
    # Queues: limits across every process ("reports=2,default=20"), the job queues with a
    # Huey queue of their own, and the one a run_huey process consumes.
    "JOBS_QUEUE_LIMITS": "",
    "JOBS_HUEY_QUEUES": (),
    "JOBS_HUEY_CONSUME_QUEUE": "",
    # The screens.
    "JOBS_UI_POLL_SECONDS": 3.0,
    "JOBS_DASHBOARD_CACHE_SECONDS": 5.0,
    # The API's throttles (DRF rates: "N/second", "minute", "hour" or "day").
    "JOBS_API_THROTTLE_ANON": "60/minute",
    "JOBS_API_THROTTLE_USER": "1200/minute",
    # Behind a reverse proxy: the client's address is the last one in X-Forwarded-For.
    "TRUSTED_PROXY": False,
    # Metrics and alerts.
    "METRICS_TOKEN": "",
    "JOBS_METRICS_WINDOW_SECONDS": 300.0,
    # Per-job labels on the /metrics histograms: one series per job, for small sites only.
    "JOBS_METRICS_PER_JOB": False,
    # Observability (jobs/observability/): the standalone site's log lines ("text" or
    # "json"), a span per run (extra [otel]), a Sentry Crons monitor per job (extra [sentry]).
    "JOBS_LOG_FORMAT": "text",
    "JOBS_OTEL": False,
    "JOBS_SENTRY_CRONS": False,
    "JOBS_ALERT_ATTEMPTS": 3,
    "JOBS_ALERT_BACKOFF_SECONDS": 1.0,
    "JOBS_ALERT_TIMEOUT_SECONDS": 10.0,
    "JOBS_ALERT_THREADS": 2,
    "JOBS_WEBHOOK_ALLOWED_HOSTS": (),
    "JOBS_WEBHOOK_SECRET": "",
    "JOBS_BASE_URL": "",
    "JOBS_ADMIN_ALERT_URL": "",
    "JOBS_ADMIN_ALERT_EMAILS": (),
    # The standalone site's account pages (jobs.web.logins).
    "PASSWORD_RESET_ENABLED": False,
    "PASSWORD_RESET_LIMIT": 5,
    # The benchmark's processes (manage.py benchmark): the key length the site demands.
    "MIN_SECRET_KEY_LENGTH": 50,
}


def setting(name: str) -> Any:
    """The project's value of `name`, or the app's default (a KeyError for a name the
    app does not know: a typo is not silently None)."""
    return getattr(settings, name, DEFAULTS[name])


def project_dir() -> Path:
    """The folder of the project's manage.py: BASE_DIR when the project sets it (Django's
    own template does), else the current folder, where manage.py is usually run."""
    base = getattr(settings, "BASE_DIR", None)
    return Path(base) if base else Path.cwd()


def kill_grace() -> float:
    """How long a stopped run's processes (or a stopped Python task) get after SIGTERM
    (after being asked to stop) before SIGKILL (before being reported)."""
    return float(setting("JOBS_KILL_GRACE_SECONDS"))


def lease() -> timedelta:
    """A running run whose heartbeat is older than this belongs to a dead worker."""
    return timedelta(seconds=float(setting("JOBS_LEASE_SECONDS")))


# A scheduler upserts its heartbeat row at most this often (jobs.metrics.scheduler_alive).
HEARTBEAT_EVERY_SECONDS = 5.0


def alive_within() -> timedelta:
    """A scheduler whose heartbeat is this recent is alive: the lease, and at least three
    heartbeats."""
    return max(lease(), timedelta(seconds=3 * HEARTBEAT_EVERY_SECONDS))


def heartbeat_interval() -> float:
    """Seconds between heartbeats: a third of the lease, so two may be missed safely."""
    return float(setting("JOBS_LEASE_SECONDS")) / 3.0


def live_log_interval() -> float:
    """Seconds between writes of the running runs' output so far (the live log)."""
    return float(setting("JOBS_LIVE_LOG_SECONDS"))


def misfire_grace() -> timedelta:
    return timedelta(seconds=float(setting("JOBS_MISFIRE_GRACE_SECONDS")))


def shutdown_grace() -> float:
    return float(setting("JOBS_SHUTDOWN_GRACE_SECONDS"))


def backfill_max_runs() -> int:
    """The most runs one backfill creates."""
    return int(setting("JOBS_BACKFILL_MAX_RUNS"))


def claim_batch() -> int:
    return int(setting("JOBS_CLAIM_BATCH"))


def uses_huey() -> bool:
    """Runs go through Huey over Redis (REDIS_URL is set)."""
    return bool(setting("REDIS_URL"))


def queue_stall() -> timedelta | None:
    """A queue whose oldest ready run has waited longer than this is stalled (the
    dashboard marks it, the health check reports it); None: never (0)."""
    seconds = float(setting("JOBS_QUEUE_STALL_SECONDS"))
    return timedelta(seconds=seconds) if seconds > 0 else None


def redispatch_after() -> timedelta:
    return timedelta(seconds=float(setting("JOBS_REDISPATCH_SECONDS")))


def history_keep_per_job() -> int:
    """Each job keeps its newest this many runs; 0: no limit."""
    return int(setting("JOBS_HISTORY_KEEP_PER_JOB"))


def history_max_age() -> timedelta | None:
    """Runs older than this are deleted; None: no limit."""
    days = float(setting("JOBS_HISTORY_MAX_AGE_DAYS"))
    return timedelta(days=days) if days > 0 else None


def audit_max_age() -> timedelta | None:
    """Records of the audit trail older than this are deleted; None: kept forever."""
    days = float(setting("JOBS_AUDIT_KEEP_DAYS"))
    return timedelta(days=days) if days > 0 else None


def team_scoped() -> str:
    """JOBS_TEAM_SCOPED, lower-case: "true", "false" or "auto" (on once a job has a team)."""
    return str(setting("JOBS_TEAM_SCOPED")).strip().lower()


def token_max_days() -> int:
    """The default and the longest lifetime of an API token, in days."""
    return int(setting("JOBS_TOKEN_MAX_DAYS"))


def prune_interval() -> float:
    """Seconds between the scheduler's pruning rounds; 0: the scheduler does not prune."""
    return float(setting("JOBS_PRUNE_INTERVAL_SECONDS"))


def executor_path() -> str:
    return str(setting("JOBS_EXECUTOR"))


@dataclass(frozen=True)
class SimulationSettings:
    min_seconds: float
    max_seconds: float
    failure_rate: float
    seed: int | None

    def for_job(
        self,
        failure_rate: float | None,
        min_seconds: float | None,
        max_seconds: float | None,
    ) -> SimulationSettings:
        """What a simulated job's runs really do: its own values where it has them, these
        defaults elsewhere. Job.clean() orders a job's range against the defaults of the
        day; if they changed since, the shortest wins rather than the run failing (the
        executor and the job's page both follow this)."""
        shortest = self.min_seconds if min_seconds is None else min_seconds
        longest = self.max_seconds if max_seconds is None else max_seconds
        return SimulationSettings(
            min_seconds=shortest,
            max_seconds=max(longest, shortest),
            failure_rate=self.failure_rate if failure_rate is None else failure_rate,
            seed=self.seed,
        )


def simulation() -> SimulationSettings:
    return SimulationSettings(
        min_seconds=float(setting("JOBS_SIM_MIN_SECONDS")),
        max_seconds=float(setting("JOBS_SIM_MAX_SECONDS")),
        failure_rate=float(setting("JOBS_SIM_FAILURE_RATE")),
        seed=setting("JOBS_SIM_SEED"),
    )


def time_zone() -> str:
    """The zone of a cron job that names none: the site's TIME_ZONE."""
    return str(settings.TIME_ZONE)


def sync_on_start() -> bool:
    """runscheduler brings the database to the schedules declared in code as it starts."""
    return bool(setting("JOBS_SYNC_ON_START"))


# --- typed accessors of the other settings: the one way the app reads a setting ---------
# (`setting(name)` is for these accessors only; jobs/tests/project/test_packaging.py checks that
# no other module reads a setting by name.)


def task_modules() -> list[str]:
    """Modules imported to find Python tasks, besides each app's `tasks` module."""
    return [str(name) for name in setting("JOBS_TASK_MODULES") or ()]


def management_commands() -> list[str]:
    """The management commands a command job may run (JOBS_MANAGEMENT_COMMANDS)."""
    return [str(name) for name in setting("JOBS_MANAGEMENT_COMMANDS")]


def shell_enabled() -> bool:
    return bool(setting("JOBS_SHELL_ENABLED"))


def shell_default_timeout() -> int:
    """The timeout of a shell run whose job sets none, in seconds (0: none)."""
    return int(setting("JOBS_SHELL_DEFAULT_TIMEOUT"))


def shell_max_timeout() -> int:
    """The longest a shell or command run may go on, in seconds: a job's own timeout
    above it is refused at save, and the executors stop a run there whatever it says."""
    return int(setting("JOBS_SHELL_MAX_TIMEOUT"))


def shell_run_timeout(own: int | None) -> int:
    """How long a shell or command run with the job's timeout `own` (None or 0: none
    of its own) may go on: its own, else JOBS_SHELL_DEFAULT_TIMEOUT (0: none), and never
    more than JOBS_SHELL_MAX_TIMEOUT."""
    most = shell_max_timeout()
    return min(own or shell_default_timeout() or most, most)


def min_interval_seconds() -> int:
    """The shortest interval, in seconds, a user without jobs.use_shell may save."""
    return int(setting("JOBS_MIN_INTERVAL_SECONDS"))


def max_pending_manual_runs() -> int:
    """The most pending runs started by hand (trigger "manual") one job may have."""
    return int(setting("JOBS_MAX_PENDING_MANUAL_RUNS"))


def shell_huey_queue() -> str:
    """The Huey queue of shell runs ("": the run's own)."""
    return str(setting("JOBS_SHELL_HUEY_QUEUE") or "")


def python_isolation() -> str:
    """How python runs are isolated: "thread" or "process" (as written; the executor
    checks the value)."""
    return str(setting("JOBS_PYTHON_ISOLATION")).strip().lower()


def http_timeout() -> float:
    """The total time of an HTTP job's request when the job sets no timeout, in seconds."""
    return float(setting("JOBS_HTTP_TIMEOUT_SECONDS"))


def celery_app_path() -> str:
    """JOBS_CELERY_APP: the dotted path of the host's Celery app ("": Celery's current app)."""
    return str(setting("JOBS_CELERY_APP") or "").strip()


def celery_wait() -> str:
    """JOBS_CELERY_WAIT as written: "result", "sent" or "" (the executor decides by the
    app's result backend, and refuses any other value)."""
    return str(setting("JOBS_CELERY_WAIT") or "").strip().lower()


def celery_poll_seconds() -> float:
    """The most time between two looks at a followed task's state, in seconds."""
    return float(setting("JOBS_CELERY_POLL_SECONDS"))


def celery_queues() -> dict[str, str]:
    """JOBS_CELERY_QUEUES: our queue names to Celery's, from "ours=theirs" pairs (a list
    from the environment, or a dict in a project's settings); a pair without "=" is
    skipped here and reported by the executor."""
    value = setting("JOBS_CELERY_QUEUES") or ()
    if isinstance(value, Mapping):
        return {str(ours): str(theirs) for ours, theirs in value.items()}
    if isinstance(value, str):
        value = value.split(",")
    pairs = (str(item).partition("=") for item in value)
    return {ours.strip(): theirs.strip() for ours, sep, theirs in pairs if sep and ours.strip()}


def log_max_bytes() -> int:
    return int(setting("JOBS_LOG_MAX_BYTES"))


def redis_url() -> str:
    return str(setting("REDIS_URL") or "")


def huey_periodic_pass() -> bool:
    return bool(setting("JOBS_HUEY_PERIODIC_PASS"))


def queue_limits_setting() -> str | Mapping[str, int]:
    """JOBS_QUEUE_LIMITS as written: "reports=2,default=20", or a dict in a project's
    settings; jobs.queues parses and checks it."""
    return setting("JOBS_QUEUE_LIMITS") or ""


def huey_queues() -> list[str]:
    """The job queues with a Huey queue of their own."""
    return [str(name) for name in setting("JOBS_HUEY_QUEUES") or ()]


def huey_queue() -> str:
    """HUEY_QUEUE: the Huey queue of every job queue not listed in JOBS_HUEY_QUEUES, and
    the prefix of the names of the listed ones (Huey's own setting: no default here)."""
    return str(getattr(settings, "HUEY_QUEUE", "jobs"))


def huey_consume_queue() -> str:
    return str(setting("JOBS_HUEY_CONSUME_QUEUE") or "")


def ui_poll_seconds() -> float:
    return float(setting("JOBS_UI_POLL_SECONDS"))


def dashboard_cache_seconds() -> float:
    return float(setting("JOBS_DASHBOARD_CACHE_SECONDS"))


# The cache whose counts every web process shares (the API's throttles, password-reset
# requests): the project's CACHES alias SHARED_CACHE when it has one, else "default".
# The standalone site makes it the database cache in CACHE_TABLE, or Redis with REDIS_URL.
SHARED_CACHE = "shared"
# The database cache's table, created by migration 0028_cache_table.
CACHE_TABLE = "jobs_cache"


def shared_cache() -> BaseCache:
    """The cache for counts that must hold across processes (docs/permissions.md)."""
    return caches[SHARED_CACHE if SHARED_CACHE in settings.CACHES else "default"]


def api_throttle_anon() -> str | None:
    """A DRF rate ("60/minute"); None: no throttle."""
    return setting("JOBS_API_THROTTLE_ANON")


def api_throttle_user() -> str | None:
    """A DRF rate ("1200/minute"); None: no throttle."""
    return setting("JOBS_API_THROTTLE_USER")


def trusted_proxy() -> bool:
    return bool(setting("TRUSTED_PROXY"))


def metrics_token() -> str:
    return str(setting("METRICS_TOKEN") or "")


def metrics_window() -> timedelta:
    return timedelta(seconds=float(setting("JOBS_METRICS_WINDOW_SECONDS")))


def metrics_per_job() -> bool:
    return bool(setting("JOBS_METRICS_PER_JOB"))


def log_format() -> str:
    """ "text" or "json": how the standalone site writes its log lines."""
    return str(setting("JOBS_LOG_FORMAT") or "text")


def otel_enabled() -> bool:
    return bool(setting("JOBS_OTEL"))


def sentry_crons_enabled() -> bool:
    return bool(setting("JOBS_SENTRY_CRONS"))


def alert_attempts() -> int:
    return int(setting("JOBS_ALERT_ATTEMPTS"))


def alert_backoff() -> float:
    return float(setting("JOBS_ALERT_BACKOFF_SECONDS"))


def alert_timeout() -> float:
    return float(setting("JOBS_ALERT_TIMEOUT_SECONDS"))


def alert_threads() -> int:
    return int(setting("JOBS_ALERT_THREADS"))


def webhook_secret() -> str:
    return str(setting("JOBS_WEBHOOK_SECRET") or "")


def base_url() -> str:
    """The site's address for links in alerts ("": relative links)."""
    return str(setting("JOBS_BASE_URL") or "")


def admin_alert_url() -> str:
    return str(setting("JOBS_ADMIN_ALERT_URL") or "")


def admin_alert_emails() -> list[str]:
    return [str(address) for address in setting("JOBS_ADMIN_ALERT_EMAILS") or ()]


def password_reset_enabled() -> bool:
    return bool(setting("PASSWORD_RESET_ENABLED"))


def password_reset_limit() -> int:
    return int(setting("PASSWORD_RESET_LIMIT"))


def min_secret_key_length() -> int:
    return int(setting("MIN_SECRET_KEY_LENGTH"))
