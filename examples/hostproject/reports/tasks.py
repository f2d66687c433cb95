"""The project's own task: the scheduler finds it because it is registered in an
installed app's `tasks` module."""

from django.conf import settings

from jobs import register


@register
def write_marker(text: str = "ran") -> str:
    """Write `text` to settings.MARKER_FILE: proof that the task ran."""
    settings.MARKER_FILE.write_text(text)
    return f"wrote {len(text)} characters"
