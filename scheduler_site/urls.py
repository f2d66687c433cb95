from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import set_language

from jobs.web.logins import account_urls

urlpatterns = [
    path("admin/", admin.site.urls),
    # Django's login, logout and password pages; the reset ones only with PASSWORD_RESET_ENABLED.
    path("accounts/", include(account_urls())),
    # The language can be chosen on the login page too.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    # The screens, the JSON API (api/), its schema and docs, and /metrics: mounted at the
    # root here; another project mounts them under a prefix of its own (README: "Use it in
    # your own project").
    path("", include("jobs.urls")),
]
