"""The alert fields of the job forms, which the dashboard's form and the admin's share,
and the form field either form makes of a job field."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import models
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from jobs.access import masking
from jobs.models import Job
from jobs.outbound.signing import SECRET_MAX_LENGTH


class JobAlertsForm(forms.ModelForm):
    """The alert fields of the job forms (the dashboard's and the admin's).

    The write-only webhook_secret is a password input that never shows the stored
    secret: left blank, the job keeps its secret; "remove" (offered only when one is set)
    clears it. A value typed is checked by Job.clean() like any field, and not shown
    again when refused. alert_after_failures left out of a post keeps the job's value
    (the default, 1, for a new job); sent blank, Job.clean() refuses it.
    """

    webhook_secret = forms.CharField(
        label=capfirst(Job._meta.get_field("webhook_secret").verbose_name),
        help_text=Job._meta.get_field("webhook_secret").help_text,
        required=False,
        max_length=SECRET_MAX_LENGTH,
        widget=forms.PasswordInput(
            render_value=False, attrs={"autocomplete": "new-password", "spellcheck": "false"}
        ),
    )
    remove_webhook_secret = forms.BooleanField(
        label=_("Remove the signing secret (webhooks are then signed with the site's, if any)"),
        required=False,
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "alert_after_failures" in self.fields:
            self.fields["alert_after_failures"].required = False
        # URL credentials are shown to nobody; sent back as shown, the stored URL stays
        # (jobs.access.masking.restore_field, in clean_webhook_url).
        self.stored_webhook_url = self.instance.webhook_url
        if "webhook_url" in self.fields and self.stored_webhook_url:
            self.initial["webhook_url"] = masking.mask_urls(self.stored_webhook_url)
        if self.instance.webhook_secret:
            self.fields["webhook_secret"].widget.attrs["placeholder"] = _(
                "A secret is set; leave blank to keep it"
            )
        else:
            del self.fields["remove_webhook_secret"]

    def clean_webhook_url(self) -> str:
        return masking.restore_field(
            "webhook_url", self.cleaned_data.get("webhook_url") or "", self.stored_webhook_url
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if not cleaned.get("webhook_secret"):
            if cleaned.pop("remove_webhook_secret", False):
                # On the instance too: a ModelForm leaves a field it was not sent at all
                # as the instance has it.
                cleaned["webhook_secret"] = self.instance.webhook_secret = ""
            else:
                cleaned["webhook_secret"] = self.instance.webhook_secret
        return cleaned


def job_form_field(field: models.Field, **kwargs: Any) -> forms.Field | None:
    """The dashboard's form field for a job field: a URL typed without a scheme is read
    as https:// (what Django 6 does anyway; Job.clean() then checks it)."""
    if isinstance(field, models.URLField):
        kwargs.setdefault("assume_scheme", "https")
    return field.formfield(**kwargs)
