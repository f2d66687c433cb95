"""The screens of notification channels: list, form, deletion and "Send a test", with the
model permissions (jobs.add_notificationchannel, ...; a test needs
jobs.change_notificationchannel); anyone who may view jobs sees the list. No page
shows a channel's URL, only its service (`slack://…`)."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from jobs.access.permissions import ADD_CHANNEL, CHANGE_CHANNEL, DELETE_CHANNEL, VIEW_JOB
from jobs.alerts.channels import send_test
from jobs.models import NotificationChannel
from jobs.web.forms.channels import ChannelForm
from jobs.web.views import needs

ROWS_SHOWN = 500
LIST_URL = "jobs:channel_list"


@require_GET
@needs(VIEW_JOB)
def channel_list(request: HttpRequest) -> HttpResponse:
    channels = NotificationChannel.objects.select_related("team").annotate(job_count=Count("jobs"))
    return render(
        request,
        "jobs/channel_list.html",
        {"section": "channels", "channels": channels.order_by("name")[:ROWS_SHOWN]},
    )


def _form_page(request: HttpRequest, channel: NotificationChannel | None) -> HttpResponse:
    form = ChannelForm(request.POST or None, instance=channel)
    if request.method == "POST" and form.is_valid():
        saved = form.save()
        text = _("Channel “%(name)s” saved.") if channel else _("Channel “%(name)s” created.")
        messages.success(request, text % {"name": saved})
        return redirect(LIST_URL)
    context = {"section": "channels", "form": form, "item": channel, "list_url": LIST_URL}
    status = 400 if request.method == "POST" else 200
    return render(request, "jobs/channel_form.html", context, status=status)


@require_http_methods(["GET", "POST"])
@needs(ADD_CHANNEL)
def channel_create(request: HttpRequest) -> HttpResponse:
    return _form_page(request, None)


@require_http_methods(["GET", "POST"])
@needs(CHANGE_CHANNEL)
def channel_edit(request: HttpRequest, channel_id: int) -> HttpResponse:
    return _form_page(request, get_object_or_404(NotificationChannel, pk=channel_id))


@require_http_methods(["GET", "POST"])
@needs(DELETE_CHANNEL)
def channel_delete(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = get_object_or_404(NotificationChannel, pk=channel_id)
    if request.method == "POST":
        channel.delete()
        messages.success(request, _("Channel “%(name)s” deleted.") % {"name": channel})
        return redirect(LIST_URL)
    context = {"section": "channels", "item": channel, "list_url": LIST_URL}
    return render(request, "jobs/calendar_confirm_delete.html", context)


@require_POST
@needs(CHANGE_CHANNEL)
def channel_test(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = get_object_or_404(NotificationChannel, pk=channel_id)
    ok, error = send_test(channel, request.user.get_username())
    if ok:
        messages.success(request, _("Test message sent to “%(name)s”.") % {"name": channel})
    else:
        messages.error(
            request,
            _("The test message to “%(name)s” failed: %(error)s")
            % {"name": channel, "error": error},
        )
    return redirect("jobs:channel_edit", channel_id=channel.pk)
