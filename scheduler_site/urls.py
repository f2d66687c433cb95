from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import set_language

from jobs.metrics import metrics_view
from jobs.web.logins import account_urls

urlpatterns = [
    path("admin/", admin.site.urls),
    # Django's login, logout and password pages; the reset ones only with PASSWORD_RESET_ENABLED.
    path("accounts/", include(account_urls())),
    # The language can be chosen on the login page too.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    # The JSON API, its schema and docs; Prometheus metrics (README: "API", "Metrics").
    path("api/", include("jobs.api.urls")),
    path("metrics", metrics_view, name="metrics"),
    path("", include("jobs.web.urls")),
]
