"""Alert channels in the admin: the Apprise URL write-only (a blank field keeps the stored
one; the list and the page show only the service, `slack://…`), validated by the model's
clean() (jobs/outbound/apprise_urls.py), and a "Send a test" action."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from jobs.alerts.channels import send_test
from jobs.models import NotificationChannel


class NotificationChannelForm(forms.ModelForm):
    url = forms.CharField(
        label=gettext_lazy("Apprise URL"),
        required=False,
        max_length=NotificationChannel._meta.get_field("url").max_length,
        # Never rendered back: the stored URL holds the service's credential.
        widget=forms.PasswordInput(render_value=False),
        help_text=NotificationChannel._meta.get_field("url").help_text,
    )

    class Meta:
        model = NotificationChannel
        fields = ("name", "team", "url", "is_team_default", "is_active", "events")

    def clean_url(self) -> str:
        url = self.cleaned_data.get("url", "").strip()
        if not url and self.instance.pk:
            return self.instance.url  # blank: unchanged
        if not url:
            raise forms.ValidationError(_("This field is required."))
        return url


@admin.register(NotificationChannel)
class NotificationChannelAdmin(admin.ModelAdmin):
    form = NotificationChannelForm
    list_display = ("name", "team", "service", "is_team_default", "is_active", "updated_at")
    list_filter = ("is_active", "is_team_default", "team")
    search_fields = ("name",)
    actions = ("send_test_message",)

    @admin.display(description=gettext_lazy("service"))
    def service(self, channel: NotificationChannel) -> str:
        return channel.shown_url

    @admin.action(description=gettext_lazy("Send a test message"), permissions=["change"])
    def send_test_message(self, request: HttpRequest, queryset: Any) -> None:
        for channel in queryset:
            ok, error = send_test(channel, request.user.get_username())
            if ok:
                self.message_user(
                    request, _("Test message sent to “%(name)s”.") % {"name": channel.name}
                )
            else:
                self.message_user(
                    request,
                    _("The test message to “%(name)s” failed: %(error)s")
                    % {"name": channel.name, "error": error},
                    messages.ERROR,
                )
