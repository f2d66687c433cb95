"""Settings for the scheduler site, read from the environment.

Every variable is listed in docs/configuration.md. A bad value raises
ImproperlyConfigured at start-up instead of being ignored. Variables not set in the
environment are read from the checkout's `.env` (ENV_FILE), which scripts/start writes.
"""

from __future__ import annotations

import zoneinfo
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.validators import validate_email

from jobs.api.schema import SCHEMA_SETTINGS as API_SCHEMA_SETTINGS
from jobs.outbound.signing import BadSecret
from jobs.outbound.signing import parse_secret as parse_webhook_secret
from scheduler_site import caches, content_policy, dotenv, observability
from scheduler_site.env import (
    env_bool,
    env_float,
    env_int,
    env_list,
    env_rate,
    env_str,
    redact_url,
    redis_url_parses,
)
from scheduler_site.logging_config import logging_dict
from scheduler_site.mysql import mysql_settings

BASE_DIR = Path(__file__).resolve().parent.parent

# First: the generated key and the options kept in .env, for every variable the
# environment does not set (scheduler_site/dotenv.py).
dotenv.load(BASE_DIR / ".env")

DEBUG = env_bool("DEBUG", False)

MIN_SECRET_KEY_LENGTH = 50
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (scripts/start writes one to .env)."
        )
    # Only for a laptop with DEBUG on; never used in production because of the check above.
    SECRET_KEY = "insecure-development-key-do-not-use-in-production"
elif not DEBUG and len(SECRET_KEY) < MIN_SECRET_KEY_LENGTH:
    # Django's deploy check (security.W009) asks for as much; a short key can be guessed.
    raise ImproperlyConfigured(
        f"SECRET_KEY must be at least {MIN_SECRET_KEY_LENGTH} characters long when DEBUG is "
        f"off; this one has {len(SECRET_KEY)}. Make one with: "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )

# Behind a reverse proxy that terminates TLS and sets X-Forwarded-Proto and
# X-Forwarded-For (docs/deployment.md): trust those headers. Off, they are ignored, since
# any client could send them.
TRUSTED_PROXY = env_bool("TRUSTED_PROXY", False)
if TRUSTED_PROXY:
    # request.is_secure() from the proxy's X-Forwarded-Proto. (The Host header is the
    # proxy's to pass on, so USE_X_FORWARDED_HOST stays off.)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# HTTPS=true when the site is served over TLS only: secure cookies, HTTP redirected to
# HTTPS, and HSTS. /healthz and /metrics stay reachable over plain HTTP for probes and
# scrapers inside the network (the patterns match the path without its leading slash).
HTTPS = env_bool("HTTPS", False)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 31536000 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = []
if not SECURE_HSTS_INCLUDE_SUBDOMAINS:
    # security.W005 (HSTS without includeSubDomains): other sites under the same domain
    # may not speak HTTPS; HSTS_INCLUDE_SUBDOMAINS=true is the owner's choice to make.
    SILENCED_SYSTEM_CHECKS.append("security.W005")
if not SECURE_HSTS_PRELOAD:
    # security.W021 (HSTS without preload): preloading is hard to undo and needs
    # includeSubDomains; HSTS_PRELOAD=true is the owner's choice to make.
    SILENCED_SYSTEM_CHECKS.append("security.W021")

# The debug page hides settings and request headers whose names look secret, URLs
# included (DATABASE_URL and REDIS_URL hold passwords).
DEFAULT_EXCEPTION_REPORTER_FILTER = "scheduler_site.reporting.SecretHidingExceptionReporterFilter"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "crispy_forms",
    "crispy_bootstrap5",
    "axes",  # failed logins and lockouts (docs/permissions.md: "Logins and throttling")
    "jobs",
]

MIDDLEWARE = [
    # First, so it sees every request: tells the development server's log which requests
    # are the pages' own htmx refreshes, which it leaves out (scheduler_site/quiet_polls.py).
    "scheduler_site.quiet_polls.MarkHtmxRequestsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    content_policy.MIDDLEWARE,  # Content-Security-Policy (scheduler_site/content_policy.py)
    # A NUL byte in the query, a form or a header is answered 400 before any view runs:
    # PostgreSQL refuses NUL in text, which would be a 500 wherever a value reaches SQL.
    "jobs.web.middleware.RejectNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every page needs a login except those marked @login_not_required (login, /healthz).
    # The app's own screens check it themselves (jobs/web/screens.py); this covers the
    # site's other pages too.
    "jobs.web.middleware.LoginRequiredMiddleware",
    # Dates and times in the user's own zone (a cookie the browser sets) on every page,
    # the admin's of other models included; the app's own pages do it themselves.
    "jobs.web.middleware.TimezoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: turns a refused login into the "too many failed logins" page.
    "axes.middleware.AxesMiddleware",
]

CONTENT_SECURITY_POLICY, SECURE_CSP = content_policy.policies()
ROOT_URLCONF = "scheduler_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # The login page's link to the password-reset pages (the app's own
                # pages need no context processor of their own).
                "jobs.web.context_processors.ui",
            ],
        },
    },
]

WSGI_APPLICATION = "scheduler_site.wsgi.application"


# --- Database ---------------------------------------------------------------------------
# SQLite by default (zero set-up); DATABASE_URL switches to PostgreSQL or MySQL/MariaDB.
DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
CONN_MAX_AGE = env_int("CONN_MAX_AGE", 60, minimum=0)
try:
    _database = dj_database_url.parse(
        DATABASE_URL, conn_max_age=CONN_MAX_AGE, conn_health_checks=True
    )
except (ValueError, KeyError) as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a database URL we understand: {exc}") from exc

if _database["ENGINE"] == "django.db.backends.sqlite3":
    _database["OPTIONS"] = {
        # Several scheduler processes share one file: WAL lets readers run beside the
        # writer, the busy timeout makes a writer wait for the lock instead of failing
        # with "database is locked", and IMMEDIATE takes the write lock when a
        # transaction begins, so a read-then-write transaction never has to upgrade its
        # lock (the upgrade is what fails at once, whatever the timeout).
        "timeout": env_float("SQLITE_BUSY_TIMEOUT", 30.0, minimum=0.1),
        "transaction_mode": "IMMEDIATE",
        # synchronous=NORMAL is durable in WAL mode except for the last transactions
        # before a power cut (never corrupting); a larger cache and rarer checkpoints keep
        # a burst of claims from spending its time in fsync.
        "init_command": (
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; "
            "PRAGMA cache_size=-65536; PRAGMA wal_autocheckpoint=10000; "
            "PRAGMA temp_store=MEMORY;"
        ),
    }
    # Tests share their database file with the processes they start, so it is a file.
    _database["TEST"] = {"NAME": str(BASE_DIR / ".test-db.sqlite3")}
elif _database["ENGINE"] == "django.db.backends.mysql":
    SILENCED_SYSTEM_CHECKS += mysql_settings(_database)
elif _database["ENGINE"] not in (
    "django.db.backends.postgresql",
    "django.db.backends.postgresql_psycopg2",
):
    raise ImproperlyConfigured(
        f"DATABASE_URL names engine {_database['ENGINE']}: SQLite, PostgreSQL or MySQL only"
    )
DATABASES = {"default": _database}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"


# --- Failed logins (docs/permissions.md: "Logins and throttling") ----------------------
# django-axes counts failed logins (the login page, the admin's, bad API tokens) per
# (user name, client address) pair and per client address; LOGIN_FAILURE_LIMIT failures
# within LOGIN_LOCKOUT_MINUTES refuse that pair, or that address, for LOGIN_LOCKOUT_MINUTES
# after the last one. Never a user name alone, from everywhere: anyone could keep its
# owner out.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1, maximum=1000)
LOGIN_LOCKOUT_MINUTES = env_float("LOGIN_LOCKOUT_MINUTES", 15.0, minimum=1.0, maximum=10080.0)
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out user name or address before any password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
# By (user name AND address) OR by address ([["username", "ip_address"], ["ip_address"]];
# only the address when a failure names no user, as a bad API token does).
AXES_LOCKOUT_PARAMETERS = "jobs.web.logins.lockout_parameters"
# The address: REMOTE_ADDR, or with TRUSTED_PROXY the one the proxy put in X-Forwarded-For.
AXES_CLIENT_IP_CALLABLE = "jobs.web.addresses.client_address"
# A successful login forgets that user's own failures from that address (its typos), not
# the address's failures for other names.
AXES_HANDLER = "jobs.web.logins.LoginAttemptHandler"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "jobs.web.logins.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
# Its log lines name the user name and address (never the password), for the operator
# who unlocks them.
AXES_SENSITIVE_PARAMETERS = []
# Only failures are recorded (and forgotten after the cool-off): no row per successful login.
AXES_DISABLE_ACCESS_LOG = True

# The password-reset pages mail a link, so they are served only when mail is set up and
# this is on; each client address and each e-mail address may ask PASSWORD_RESET_LIMIT
# times an hour.
PASSWORD_RESET_ENABLED = env_bool("PASSWORD_RESET_ENABLED", False)
PASSWORD_RESET_LIMIT = env_int("PASSWORD_RESET_LIMIT", 5, minimum=1, maximum=1000)


# --- Internationalisation and time ------------------------------------------------------
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ja", "日本語")]
# The catalogue is the app's (it ships in the package); listed here too so that it comes
# before Django REST framework's whatever the order of INSTALLED_APPS (jobs/web/django_wording.py),
# and so that `makemessages -l ja` run from here writes it (the site's templates included).
LOCALE_PATHS = [BASE_DIR / "jobs" / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
try:
    zoneinfo.ZoneInfo(TIME_ZONE)
except (zoneinfo.ZoneInfoNotFoundError, ValueError):
    raise ImproperlyConfigured(f"TIME_ZONE must be an IANA zone name, got {TIME_ZONE!r}") from None
USE_I18N = True
# Stored times are aware UTC; they are shown in the user's zone at the edge.
USE_TZ = True
# One way of writing a moment per language, the screens' (jobs/formats), in the admin too.
FORMAT_MODULE_PATH = ["jobs.formats"]


# --- Static files -----------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve straight from the apps' static folders, so no collectstatic step is needed to start.
WHITENOISE_USE_FINDERS = True

# The screens refresh their live parts this often (htmx polling, only while the tab is visible).
JOBS_UI_POLL_SECONDS = env_float("JOBS_UI_POLL_SECONDS", 3.0, minimum=0.2, maximum=3600.0)
# The dashboard's 24-hour counts are reused for this long, so that many open dashboards
# polling every few seconds count the last day's runs once per period, not once per poll.
JOBS_DASHBOARD_CACHE_SECONDS = env_float(
    "JOBS_DASHBOARD_CACHE_SECONDS", 5.0, minimum=0.0, maximum=3600.0
)

CRISPY_ALLOWED_TEMPLATE_PACKS = "bootstrap5"
CRISPY_TEMPLATE_PACK = "bootstrap5"


# --- The scheduler ----------------------------------------------------------------------
# A running run whose heartbeat is older than this belongs to a dead worker.
JOBS_LEASE_SECONDS = env_float("JOBS_LEASE_SECONDS", 30.0, minimum=1.0)
# An occurrence later than this is "missed" and handled by the job's misfire policy.
JOBS_MISFIRE_GRACE_SECONDS = env_float("JOBS_MISFIRE_GRACE_SECONDS", 5.0, minimum=0.0)
# How long SIGTERM/SIGINT waits for in-flight runs before interrupting them.
JOBS_SHUTDOWN_GRACE_SECONDS = env_float("JOBS_SHUTDOWN_GRACE_SECONDS", 30.0, minimum=0.0)
# Jobs claimed per transaction.
JOBS_CLAIM_BATCH = env_int("JOBS_CLAIM_BATCH", 500, minimum=1, maximum=5000)
# The most runs one backfill creates (POST /api/v1/jobs/<id>/backfill/, manage.py backfill).
JOBS_BACKFILL_MAX_RUNS = env_int("JOBS_BACKFILL_MAX_RUNS", 1000, minimum=1, maximum=100000)
# Jobs of a team seen and run by its members only (docs/permissions.md "Teams"): true/false/auto.
JOBS_TEAM_SCOPED = env_str("JOBS_TEAM_SCOPED", "auto").strip().lower()
if JOBS_TEAM_SCOPED not in ("true", "false", "auto"):
    raise ImproperlyConfigured(f"JOBS_TEAM_SCOPED is true, false or auto: {JOBS_TEAM_SCOPED!r}")
JOBS_EXECUTOR = env_str("JOBS_EXECUTOR", "jobs.executors.SimulatedExecutor")
# A queue whose oldest ready run has waited longer than this is stalled: the dashboard
# marks it and the health check reports it (jobs/queues/settings.py); 0: never.
JOBS_QUEUE_STALL_SECONDS = env_float(
    "JOBS_QUEUE_STALL_SECONDS", 600.0, minimum=0.0, maximum=7 * 86400.0
)

# Bounded history (jobs/runtime/retention.py): a finished run is deleted once it is not
# among its job's newest JOBS_HISTORY_KEEP_PER_JOB runs, or once it is older than
# JOBS_HISTORY_MAX_AGE_DAYS; 0 turns a rule off. The scheduler prunes a little at a time,
# starting a new round every JOBS_PRUNE_INTERVAL_SECONDS (0: only `manage.py prunehistory`).
JOBS_HISTORY_KEEP_PER_JOB = env_int("JOBS_HISTORY_KEEP_PER_JOB", 1000, minimum=0)
JOBS_HISTORY_MAX_AGE_DAYS = env_float("JOBS_HISTORY_MAX_AGE_DAYS", 30.0, minimum=0.0)
JOBS_PRUNE_INTERVAL_SECONDS = env_float("JOBS_PRUNE_INTERVAL_SECONDS", 60.0, minimum=0.0)
# The audit trail of jobs (who changed what) keeps its records this many days; pruned with
# the runs (0: kept forever).
JOBS_AUDIT_KEEP_DAYS = env_float("JOBS_AUDIT_KEEP_DAYS", 365.0, minimum=0.0)
JOBS_TOKEN_MAX_DAYS = env_int("JOBS_TOKEN_MAX_DAYS", 90, minimum=1, maximum=3650)  # token life

# The simulated executor.
JOBS_SIM_MIN_SECONDS = env_float("JOBS_SIM_MIN_SECONDS", 1.0, minimum=0.0, maximum=86400.0)
JOBS_SIM_MAX_SECONDS = env_float("JOBS_SIM_MAX_SECONDS", 5.0, minimum=0.0, maximum=86400.0)
if JOBS_SIM_MAX_SECONDS < JOBS_SIM_MIN_SECONDS:
    raise ImproperlyConfigured(
        "JOBS_SIM_MAX_SECONDS must not be smaller than JOBS_SIM_MIN_SECONDS "
        f"({JOBS_SIM_MAX_SECONDS} < {JOBS_SIM_MIN_SECONDS})"
    )
JOBS_SIM_FAILURE_RATE = env_float("JOBS_SIM_FAILURE_RATE", 0.2, minimum=0.0, maximum=1.0)
JOBS_SIM_SEED = env_int("JOBS_SIM_SEED", None)


# --- Jobs that do real work (docs/executors.md) ----------------------------------------
# Python tasks: besides each installed app's `tasks` module, these modules are imported
# to find the functions registered with @jobs.register.
JOBS_TASK_MODULES = env_list("JOBS_TASK_MODULES", ["jobs.example_tasks"])
# Django's task framework (django.tasks on Django 6, the django-tasks backport on 5.2):
# every task.enqueue() is a run of this scheduler (docs/django-tasks.md). No QUEUES
# list: a task may name any queue (a scheduler serves it with --queues).
TASKS = {"default": {"BACKEND": "jobs.tasks_backend.SchedulerBackend", "QUEUES": []}}
# runscheduler syncs the schedules declared in code (@register(cron=...)) as it starts,
# as `manage.py syncjobs` does; off for a rolling deploy that runs syncjobs as a release
# step (docs/scheduling.md "Schedules in code").
JOBS_SYNC_ON_START = env_bool("JOBS_SYNC_ON_START", True)
# The management commands a `command` job may run. Only users with jobs.use_shell may
# choose any but the few known to be harmless (jobs.executors.command.SAFE_COMMANDS).
JOBS_MANAGEMENT_COMMANDS = env_list(
    "JOBS_MANAGEMENT_COMMANDS", ["clearsessions", "prunehistory", "check"]
)
# Shell jobs run any command as the scheduler's OS user: off unless switched on.
JOBS_SHELL_ENABLED = env_bool("JOBS_SHELL_ENABLED", False)
# With Huey: the queue shell runs are sent to, for workers of their own under another OS
# user (docs/deployment.md); empty: with every other run.
JOBS_SHELL_HUEY_QUEUE = env_str("JOBS_SHELL_HUEY_QUEUE", "")
# The timeout of a shell job that sets none of its own.
JOBS_SHELL_DEFAULT_TIMEOUT = env_int(
    "JOBS_SHELL_DEFAULT_TIMEOUT", 3600, minimum=1, maximum=7 * 86400
)
# Quotas (docs/permissions.md "Quotas"); the last at most 60, cron's finest step.
JOBS_SHELL_MAX_TIMEOUT = env_int("JOBS_SHELL_MAX_TIMEOUT", 86400, minimum=1, maximum=7 * 86400)
JOBS_MAX_PENDING_MANUAL_RUNS = env_int("JOBS_MAX_PENDING_MANUAL_RUNS", 100, minimum=1)
JOBS_MIN_INTERVAL_SECONDS = env_int("JOBS_MIN_INTERVAL_SECONDS", 10, minimum=1, maximum=60)
# Stopping a shell or command run: SIGTERM to its process group, SIGKILL this long after.
JOBS_KILL_GRACE_SECONDS = env_float("JOBS_KILL_GRACE_SECONDS", 5.0, minimum=0.0, maximum=600.0)
# Python runs: "thread" (in the worker's thread; stopping is cooperative, the task must
# look at current_run().stop) or "process" (a child process per run, killed at a cancel
# or a timeout after JOBS_KILL_GRACE_SECONDS).
JOBS_PYTHON_ISOLATION = env_str("JOBS_PYTHON_ISOLATION", "thread").strip().lower()
if JOBS_PYTHON_ISOLATION not in ("thread", "process"):
    raise ImproperlyConfigured(
        f"JOBS_PYTHON_ISOLATION must be thread or process, got {JOBS_PYTHON_ISOLATION!r}"
    )
# HTTP jobs: hosts (names or addresses) allowed although internal (jobs/outbound/rules.py).
JOBS_HTTP_ALLOWED_HOSTS = env_list("JOBS_HTTP_ALLOWED_HOSTS", [])
# The total time an HTTP job's request may take when the job sets no timeout of its own.
JOBS_HTTP_TIMEOUT_SECONDS = env_float(
    "JOBS_HTTP_TIMEOUT_SECONDS", 30.0, minimum=0.1, maximum=3600.0
)
# Celery jobs (the [celery] extra): the host's Celery app (dotted path; empty: Celery's
# current app), how far a run follows its task ("result": to its end through the result
# backend, the default when the app has one; "sent": until the broker accepted it), how
# often it asks the result backend at most, and the job queues whose Celery queue has
# another name ("ours=theirs" pairs; the default queue is Celery's task_default_queue).
JOBS_CELERY_APP = env_str("JOBS_CELERY_APP", "").strip()
JOBS_CELERY_WAIT = env_str("JOBS_CELERY_WAIT", "").strip().lower()
if JOBS_CELERY_WAIT not in ("", "result", "sent"):
    raise ImproperlyConfigured(f"JOBS_CELERY_WAIT must be result or sent, got {JOBS_CELERY_WAIT!r}")
JOBS_CELERY_POLL_SECONDS = env_float("JOBS_CELERY_POLL_SECONDS", 1.0, minimum=0.01, maximum=60.0)
JOBS_CELERY_QUEUES = env_list("JOBS_CELERY_QUEUES", [])
# A run's log keeps at most this many bytes (its beginning and its end).
JOBS_LOG_MAX_BYTES = env_int("JOBS_LOG_MAX_BYTES", 262144, minimum=1024, maximum=64 * 1024 * 1024)
# How often a running run's output so far is written to the database.
JOBS_LIVE_LOG_SECONDS = env_float("JOBS_LIVE_LOG_SECONDS", 1.0, minimum=0.1, maximum=2.0)

# --- Huey over Redis (optional) --------------------------------------------------------
# With REDIS_URL set, runscheduler hands runs to Huey and `manage.py run_huey` workers on
# any number of machines execute them. Without it, runscheduler runs them in its threads,
# and Huey is not installed at all: no process imports huey or redis-py (a third of the
# start-up of `runscheduler --once`).
REDIS_URL = env_str("REDIS_URL", "")
HUEY_QUEUE = env_str("HUEY_QUEUE", "jobs")
# The job queues whose runs go to a Huey queue of their own, named HUEY_QUEUE-<queue>
# (docs/scaling.md: "Queues"); runs of any other queue go to HUEY_QUEUE. The same on every process.
JOBS_HUEY_QUEUES = env_list("JOBS_HUEY_QUEUES", [])
# Which of those a `run_huey` process consumes (empty: HUEY_QUEUE, the runs of every queue
# not listed). Names are checked by the system checks (jobs/queues/checks.py).
JOBS_HUEY_CONSUME_QUEUE = env_str("JOBS_HUEY_CONSUME_QUEUE", "").strip()
_huey_name = f"{HUEY_QUEUE}-{JOBS_HUEY_CONSUME_QUEUE}" if JOBS_HUEY_CONSUME_QUEUE else HUEY_QUEUE
if REDIS_URL:
    if not REDIS_URL.startswith(("redis://", "rediss://", "unix://")) or not redis_url_parses(
        REDIS_URL
    ):
        # The URL may hold a password: the message shows it without its user part.
        raise ImproperlyConfigured(
            f"REDIS_URL must be a redis://, rediss:// or unix:// URL, got {redact_url(REDIS_URL)!r}"
        )
    from jobs.huey.serializer import JSONSerializer

    INSTALLED_APPS = [*INSTALLED_APPS, "huey.contrib.djhuey"]
    HUEY = {
        "huey_class": "huey.RedisHuey",
        "name": _huey_name,
        "url": REDIS_URL,
        "immediate": False,
        # Outcomes are recorded on the runs; Huey need not keep task results.
        "results": False,
        "utc": True,
        # Messages are JSON: a message is never unpickled, whoever could write to Redis.
        "serializer": JSONSerializer(),
        "consumer": {
            "workers": env_int("HUEY_WORKERS", 4, minimum=1, maximum=256),
            "worker_type": "thread",
            "periodic": True,
        },
    }
# A run handed to Huey but still pending after this long is handed out again: its
# message was lost (a Redis restart, an eviction). A duplicate message starts it once.
JOBS_REDISPATCH_SECONDS = env_float("JOBS_REDISPATCH_SECONDS", 60.0, minimum=1.0)
# For deployments that run only Huey consumers: a scheduler pass every minute.
JOBS_HUEY_PERIODIC_PASS = env_bool("JOBS_HUEY_PERIODIC_PASS", False)

# --- queues (docs/scaling.md: "Queues") ------------------------------------------------
# The most runs of a queue running at once across every process, as "reports=2,default=20";
# queues not named have no limit. The same on every process. Read by jobs.conf and checked
# by a system check (a bad value stops runscheduler with a message naming it).
JOBS_QUEUE_LIMITS = env_str("JOBS_QUEUE_LIMITS", "")


# --- JSON API, metrics and alerts (docs/api.md, metrics.md, alerts.md) ------------------
INSTALLED_APPS += [
    "rest_framework",
    "rest_framework.authtoken",  # tokens for scripts; registers its own admin page
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from the repo's static files, no CDN
]

# The API sets its own DRF classes (jobs/api/policy.py): no REST_FRAMEWORK setting is
# needed. Its throttles: far above what a script needs; a 429 carries Retry-After. The
# counts (and password resets') live in the "shared" cache, one for every process: Redis with
# REDIS_URL, else the database (scheduler_site/caches.py; docs/permissions.md). The
# address counted is REMOTE_ADDR, or with TRUSTED_PROXY the last one in X-Forwarded-For.
CACHES = caches.cache_settings(REDIS_URL)
JOBS_API_THROTTLE_ANON = env_rate("API_THROTTLE_ANON", "60/minute")
JOBS_API_THROTTLE_USER = env_rate("API_THROTTLE_USER", "1200/minute")

# For `manage.py spectacular`, which describes the whole site (the schema the API serves
# sets the same itself, jobs/api/docs.py).
SPECTACULAR_SETTINGS = {
    **API_SCHEMA_SETTINGS,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# /metrics: open when empty; otherwise scrapers send "Authorization: Bearer <token>".
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
# The window of the "recent runs" metrics (finished by status, duration, start lag).
JOBS_METRICS_WINDOW_SECONDS = env_float(
    "JOBS_METRICS_WINDOW_SECONDS", 300.0, minimum=10.0, maximum=86400.0
)
# Per-job labels on the /metrics histograms (one series per job: small sites); spans per
# run (extra [otel]), Sentry Crons monitors (extra [sentry]): docs/observability.md.
JOBS_METRICS_PER_JOB = env_bool("JOBS_METRICS_PER_JOB", False)
JOBS_OTEL = env_bool("JOBS_OTEL", False)
JOBS_SENTRY_CRONS = env_bool("JOBS_SENTRY_CRONS", False)
SENTRY_DSN = env_str("SENTRY_DSN", "")

# Alerts: tries per alert, the wait before the second (doubling after), the total time
# one webhook delivery may take.
JOBS_ALERT_ATTEMPTS = env_int("JOBS_ALERT_ATTEMPTS", 3, minimum=1, maximum=10)
JOBS_ALERT_BACKOFF_SECONDS = env_float(
    "JOBS_ALERT_BACKOFF_SECONDS", 1.0, minimum=0.0, maximum=3600.0
)
JOBS_ALERT_TIMEOUT_SECONDS = env_float(
    "JOBS_ALERT_TIMEOUT_SECONDS", 10.0, minimum=0.1, maximum=300.0
)
JOBS_ALERT_THREADS = env_int("JOBS_ALERT_THREADS", 2, minimum=1, maximum=32)
# Webhook hosts (names or addresses) allowed although internal (jobs/outbound/rules.py).
JOBS_WEBHOOK_ALLOWED_HOSTS = env_list("JOBS_WEBHOOK_ALLOWED_HOSTS", [])
# Signs every webhook (Standard Webhooks: "whsec_" + base64 of 24 to 64 random bytes); a
# job's own webhook_secret takes its place. Empty: webhooks go unsigned.
JOBS_WEBHOOK_SECRET = env_str("JOBS_WEBHOOK_SECRET", "").strip()
if JOBS_WEBHOOK_SECRET:
    try:
        parse_webhook_secret(JOBS_WEBHOOK_SECRET)
    except BadSecret as exc:
        raise ImproperlyConfigured(
            f'JOBS_WEBHOOK_SECRET {exc}. Make one with: python -c "import base64, os; '
            "print('whsec_' + base64.b64encode(os.urandom(32)).decode())\""
        ) from None
# Where people open the site, for the links in alerts ("https://scheduler.example.com").
JOBS_BASE_URL = env_str("JOBS_BASE_URL", "").rstrip("/")
if JOBS_BASE_URL and not JOBS_BASE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured(
        f"JOBS_BASE_URL must start with http:// or https://, got {JOBS_BASE_URL!r}"
    )

# Where "the scheduler is down" and its recovery are told (jobs/alerts/health.py): a
# webhook URL, under the address rules of job webhooks (jobs/outbound/rules.py: checked at
# start-up by the system check jobs.E011 and again when sending), and e-mail addresses.
JOBS_ADMIN_ALERT_URL = env_str("JOBS_ADMIN_ALERT_URL", "").strip()
if JOBS_ADMIN_ALERT_URL:
    _alert_url = urlsplit(JOBS_ADMIN_ALERT_URL)
    if _alert_url.scheme not in ("http", "https") or not _alert_url.hostname:
        raise ImproperlyConfigured(
            "JOBS_ADMIN_ALERT_URL must be an http:// or https:// URL with a host, got "
            f"{redact_url(JOBS_ADMIN_ALERT_URL)!r}"
        )
JOBS_ADMIN_ALERT_EMAILS = env_list("JOBS_ADMIN_ALERT_EMAILS", [])
for _address in JOBS_ADMIN_ALERT_EMAILS:
    try:
        validate_email(_address)
    except ValidationError:
        raise ImproperlyConfigured(
            "JOBS_ADMIN_ALERT_EMAILS must be e-mail addresses separated by commas, got "
            f"{_address!r}"
        ) from None

# E-mail alerts go through Django's mail settings.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("Set at most one of EMAIL_USE_TLS and EMAIL_USE_SSL.")
EMAIL_TIMEOUT = env_float("EMAIL_TIMEOUT", 10.0, minimum=0.1, maximum=300.0)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "scheduler@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL


# --- Logging ----------------------------------------------------------------------------
_LOG_LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}
LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
if LOG_LEVEL not in _LOG_LEVELS:
    raise ImproperlyConfigured(
        f"LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, got {LOG_LEVEL!r}"
    )
# The "run started" / "run finished" line of every run (jobs.runtime.worker) at INFO;
# scripts/start sets WARNING, and runscheduler's summary line says what ran instead.
RUN_LOG_LEVEL = env_str("RUN_LOG_LEVEL", LOG_LEVEL).upper()
if RUN_LOG_LEVEL not in _LOG_LEVELS:
    raise ImproperlyConfigured(
        f"RUN_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, got {RUN_LOG_LEVEL!r}"
    )
# "json": one JSON object per line, with the run's fields while it runs.
JOBS_LOG_FORMAT = env_str("JOBS_LOG_FORMAT", "text").strip().lower()
LOGGING = logging_dict(JOBS_LOG_FORMAT, level=LOG_LEVEL, run_level=RUN_LOG_LEVEL)
observability.set_up(otel=JOBS_OTEL, sentry_dsn=SENTRY_DSN)
