"""The API tokens page: the signed-in user's own tokens (jobs.models.tokens), a form to
make one, and a button to revoke one.

A token acts as its user with the user's permissions (less, when read-only or scoped to
a team), so only its owner may make or revoke one here, and never sees another's: the
page reads and changes request.user's alone. The secret is shown only in the answer to
the POST that made it (never cached); after that the page shows only its prefix.
Whoever may see jobs (jobs.view_job) may have tokens: without that permission a token
is refused everywhere anyway.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from jobs.access.permissions import CHANGE_JOB, VIEW_JOB
from jobs.models import ApiToken, issue_token, revoke_token
from jobs.models.tokens import TOKEN_NAME_MAX_LENGTH, max_days
from jobs.web.views import needs


def team_choices(user: Any) -> Any:
    """The teams a user may scope a token to: their own groups (a superuser: any)."""
    return Group.objects.all() if user.is_superuser else user.groups.all()


class TokenForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=TOKEN_NAME_MAX_LENGTH)
    team = forms.ModelChoiceField(
        label=_("Team"), queryset=Group.objects.none(), required=False, empty_label=_("(any)")
    )
    read_only = forms.BooleanField(label=_("Read-only"), required=False)

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        # Made here, not in the class: the setting may change (tests override it).
        longest = max_days()
        self.fields["days"] = forms.IntegerField(
            label=_("Days until it expires"), min_value=1, max_value=longest, initial=longest
        )
        self.fields["team"].queryset = team_choices(user)
        for name, field in self.fields.items():
            css = {"team": "form-select", "read_only": "form-check-input"}.get(name, "form-control")
            field.widget.attrs["class"] = css

    def issue(self) -> str | None:
        """The new token's text, or None with the errors on the form (nothing saved)."""
        if not self.is_valid():
            return None
        data = self.cleaned_data
        try:
            return issue_token(
                self.user,
                data["name"],
                data["days"],
                team=data["team"],
                read_only=data["read_only"],
            ).text
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                for message in messages:
                    self.add_error(field if field in self.fields else None, message)
            return None


@never_cache
@require_http_methods(["GET", "POST"])
@needs(VIEW_JOB)
def api_token(request: HttpRequest) -> HttpResponse:
    new_text = None
    if request.method == "POST":
        form = TokenForm(request.user, request.POST)
        new_text = form.issue()
        if new_text is not None:
            form = TokenForm(request.user)
    else:
        form = TokenForm(request.user)
    context = {
        "section": "api_token",
        "tokens": ApiToken.objects.filter(user=request.user).select_related("team"),
        "form": form,
        "new_text": new_text,
        "max_days": max_days(),
        "read_only": not request.user.has_perm(CHANGE_JOB),
    }
    status = 400 if request.method == "POST" and new_text is None else 200
    return render(request, "jobs/api_token.html", context, status=status)


@require_POST
@needs(VIEW_JOB)
def api_token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    # Another user's token is as unknown as a missing one.
    token = ApiToken.objects.filter(user=request.user, pk=token_id).select_related("user").first()
    if token is None:
        raise Http404
    revoke_token(token)
    return redirect("jobs:api_token")
