"""What the job forms post for a valid job: the dashboard's and the admin's.

    from jobs.tests.forms import admin_form, dashboard_form

Both give an active job running every 10 minutes; keywords change or add fields.
"""

from __future__ import annotations

from typing import Any

_COMMON: dict[str, Any] = {
    "description": "",
    "is_active": "on",
    "schedule_type": "interval",
    "interval": "10",
    "interval_unit": "minute",
    "misfire_policy": "coalesce",
    "overlap_policy": "allow",
    "max_retries": "0",
    "retry_backoff_seconds": "10",
    "queue": "default",
    "priority": "0",
}


def dashboard_form(**fields: Any) -> dict[str, Any]:
    """The dashboard's job form (jobs.web.forms.JobForm)."""
    return {
        "name": "nightly backup",
        "command": "backup --all",
        **_COMMON,
        "scheduled_at": "",
        **fields,
    }


def admin_form(**fields: Any) -> dict[str, Any]:
    """The admin's job form, with the split date-time widget and the empty management
    form of the change page's read-only inline of runs."""
    return {
        "name": "report",
        "command": "report.sh",
        "executor": "simulated",
        "arguments": "{}",
        **_COMMON,
        "scheduled_at_0": "",
        "scheduled_at_1": "",
        "runs-TOTAL_FORMS": "0",
        "runs-INITIAL_FORMS": "0",
        "runs-MIN_NUM_FORMS": "0",
        "runs-MAX_NUM_FORMS": "0",
        **fields,
    }
