"""The languages the header's switch offers, and the language of a page in a project
without LocaleMiddleware.

The app is written in English and translated into Japanese (jobs/locale/): offering the
ninety-odd languages of Django's default LANGUAGES would show pages in English under
another language's name. A project's own codes are kept (its "en-us" is the option for
English), so the switch posts a code Django's set_language accepts.
"""

from __future__ import annotations

from typing import NamedTuple

from django.conf import settings
from django.http import HttpRequest
from django.utils import translation

# The languages the app's screens are written in: English and its own catalogue's.
APP_LANGUAGES = ("en", "ja")


class LanguageChoice(NamedTuple):
    code: str  # as the project's LANGUAGES spells it, for set_language
    name: str  # in the language itself: a Japanese reader looks for 日本語, not 英語
    selected: bool


def _generic(code: str) -> str:
    return code.lower().split("-")[0]


def switch_choices(current: str) -> list[LanguageChoice]:
    """The app's languages that the project offers, in the project's order, the one of
    the page (`current`, "en-us" counting as English) selected."""
    choices = []
    taken: set[str] = set()
    for code, _name in settings.LANGUAGES:
        generic = _generic(code)
        if generic not in APP_LANGUAGES or generic in taken:
            continue
        taken.add(generic)
        name = translation.get_language_info(code)["name_local"]
        choices.append(LanguageChoice(code, name, generic == _generic(current)))
    return choices


def chosen_language(request: HttpRequest) -> str | None:
    """The language the visitor chose with the switch (set_language's cookie), when no
    LocaleMiddleware has applied it already; None to leave the project's language."""
    if hasattr(request, "LANGUAGE_CODE"):  # LocaleMiddleware ran
        return None
    code = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
    if not code:
        return None
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return None
