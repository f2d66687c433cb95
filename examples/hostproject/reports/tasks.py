"""The project's own tasks: the scheduler finds them because they are registered in an
installed app's `tasks` module. The second one has its schedule declared here as well:
`manage.py syncjobs` (or `runscheduler` at start) makes it a job."""

from django.conf import settings

from jobs import register


@register
def write_marker(text: str = "ran") -> str:
    """Write `text` to settings.MARKER_FILE: proof that the task ran."""
    settings.MARKER_FILE.write_text(text)
    return f"wrote {len(text)} characters"


@register(cron="0 6 * * 1-5", timezone="Asia/Tokyo", key="weekday-mornings", max_retries=2)
def count_reports(text: str = "counted") -> str:
    """Write `text` to settings.CODE_MARKER_FILE: proof that the job declared in code ran."""
    settings.CODE_MARKER_FILE.write_text(text)
    return "counted"
