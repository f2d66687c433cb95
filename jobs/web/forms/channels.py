"""The form of an alert channel: the URL write-only (never drawn back; blank keeps the
stored one), the rules the model's (NotificationChannel.clean(): Apprise reads it, its host may
be sent to), each message at its field."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from jobs.models import NotificationChannel
from jobs.models.channels import CHANNEL_EVENTS, CHANNEL_URL_MAX_LENGTH
from jobs.web.forms.calendars import Drawn

EVENT_CHOICES = [
    (CHANNEL_EVENTS[0], _("Failure")),
    (CHANNEL_EVENTS[1], _("Recovery")),
    (CHANNEL_EVENTS[2], _("Running long")),
]


class ChannelForm(Drawn, forms.ModelForm):
    url = forms.CharField(
        label=_("Apprise URL"),
        required=False,
        max_length=CHANNEL_URL_MAX_LENGTH,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=NotificationChannel._meta.get_field("url").help_text,
    )
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=EVENT_CHOICES,
        initial=list(CHANNEL_EVENTS),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    class Meta:
        model = NotificationChannel
        fields = ["name", "team", "url", "events", "is_team_default", "is_active"]

    def clean_url(self) -> str:
        url = (self.cleaned_data.get("url") or "").strip()
        if not url and self.instance.pk:
            return self.instance.url  # blank: the stored URL stays
        if not url:
            raise forms.ValidationError(_("Give the channel's Apprise URL."))
        return url
