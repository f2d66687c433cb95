from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from django.views.i18n import set_language

from jobs.web.logins import account_urls


class FaviconView(RedirectView):
    """/favicon.ico, which browsers ask for on any page without an icon link (a JSON
    answer, /metrics): the app's icon rather than a 404. Resolved per request, so the
    static storage names the file as it was collected."""

    permanent = False

    def get_redirect_url(self, *args: object, **kwargs: object) -> str:
        return static("jobs/favicon.ico")


urlpatterns = [
    path("admin/", admin.site.urls),
    # Django's login, logout and password pages; the reset ones only with PASSWORD_RESET_ENABLED.
    path("accounts/", include(account_urls())),
    # The language can be chosen on the login page too.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    path("favicon.ico", login_not_required(FaviconView.as_view()), name="favicon"),
    # The screens, the JSON API (api/), its schema and docs, and /metrics: mounted at the
    # root here; another project mounts them under a prefix of its own (docs/host-project.md).
    path("", include("jobs.urls")),
]
