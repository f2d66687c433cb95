"""Django's own wording of form messages, kept in the project's catalogue.

Django REST framework's catalogue translates these same messages differently, and it
comes before Django's. Listing them here keeps them in jobs/locale/ja (makemessages finds
them), so forms say what Django says. Never imported at run time.
"""

from django.utils.translation import gettext_noop

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
