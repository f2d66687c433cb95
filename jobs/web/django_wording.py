"""Django's own wording of form messages, kept in the project's catalogue.

Django REST framework's catalogue translates these same messages differently, and it
comes before Django's. Listing them here keeps them in jobs/locale/ja (makemessages finds
them), so forms say what Django says. Never imported at run time.
"""

from django.utils.translation import gettext_noop, ngettext

DJANGO_FORM_MESSAGES = [
    gettext_noop("This field is required."),
    gettext_noop("Enter a valid URL."),
    gettext_noop("No file was submitted."),
    gettext_noop("The submitted file is empty."),
    gettext_noop("Value must be valid JSON."),
    gettext_noop(
        "Upload a valid image. The file you uploaded was either not an image or a corrupted image."
    ),
]

# django.contrib.humanize's relative times, worded as Japanese reads them: its catalogue
# says 「今から38秒」 and 「今」 where 「38秒後」 and 「たった今」 read naturally. Listed in a
# function never called, so makemessages finds the plural forms too.


def _humanize_relative_times() -> None:  # pragma: no cover - read by makemessages only
    gettext_noop("now")
    gettext_noop("%(delta)s from now")
    gettext_noop("%(delta)s ago")
    ngettext("a second from now", "%(count)s seconds from now", 0)
    ngettext("a minute from now", "%(count)s minutes from now", 0)
    ngettext("an hour from now", "%(count)s hours from now", 0)
    ngettext("a second ago", "%(count)s seconds ago", 0)
    ngettext("a minute ago", "%(count)s minutes ago", 0)
    ngettext("an hour ago", "%(count)s hours ago", 0)
