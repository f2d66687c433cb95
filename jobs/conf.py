"""The scheduler's settings, read through django.conf so tests can override them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings


def lease() -> timedelta:
    """A running run whose heartbeat is older than this belongs to a dead worker."""
    return timedelta(seconds=float(settings.JOBS_LEASE_SECONDS))


def heartbeat_interval() -> float:
    """Seconds between heartbeats: a third of the lease, so two may be missed safely."""
    return float(settings.JOBS_LEASE_SECONDS) / 3.0


def live_log_interval() -> float:
    """Seconds between writes of the running runs' output so far (the live log)."""
    return float(getattr(settings, "JOBS_LIVE_LOG_SECONDS", 1.0))


def misfire_grace() -> timedelta:
    return timedelta(seconds=float(settings.JOBS_MISFIRE_GRACE_SECONDS))


def shutdown_grace() -> float:
    return float(settings.JOBS_SHUTDOWN_GRACE_SECONDS)


def claim_batch() -> int:
    return int(settings.JOBS_CLAIM_BATCH)


def uses_huey() -> bool:
    """Runs go through Huey over Redis (REDIS_URL is set)."""
    return bool(getattr(settings, "REDIS_URL", ""))


def redispatch_after() -> timedelta:
    return timedelta(seconds=float(settings.JOBS_REDISPATCH_SECONDS))


def history_keep_per_job() -> int:
    """Each job keeps its newest this many runs; 0: no limit."""
    return int(settings.JOBS_HISTORY_KEEP_PER_JOB)


def history_max_age() -> timedelta | None:
    """Runs older than this are deleted; None: no limit."""
    days = float(settings.JOBS_HISTORY_MAX_AGE_DAYS)
    return timedelta(days=days) if days > 0 else None


def audit_max_age() -> timedelta | None:
    """Records of the audit trail older than this are deleted; None: kept forever."""
    days = float(settings.JOBS_AUDIT_KEEP_DAYS)
    return timedelta(days=days) if days > 0 else None


def prune_interval() -> float:
    """Seconds between the scheduler's pruning rounds; 0: the scheduler does not prune."""
    return float(settings.JOBS_PRUNE_INTERVAL_SECONDS)


def executor_path() -> str:
    return str(settings.JOBS_EXECUTOR)


@dataclass(frozen=True)
class SimulationSettings:
    min_seconds: float
    max_seconds: float
    failure_rate: float
    seed: int | None


def simulation() -> SimulationSettings:
    return SimulationSettings(
        min_seconds=float(settings.JOBS_SIM_MIN_SECONDS),
        max_seconds=float(settings.JOBS_SIM_MAX_SECONDS),
        failure_rate=float(settings.JOBS_SIM_FAILURE_RATE),
        seed=settings.JOBS_SIM_SEED,
    )


def time_zone() -> str:
    """The zone of a cron job that names none: the site's TIME_ZONE."""
    return str(settings.TIME_ZONE)


def sync_on_start() -> bool:
    """runscheduler brings the database to the schedules declared in code as it starts."""
    return bool(getattr(settings, "JOBS_SYNC_ON_START", True))
