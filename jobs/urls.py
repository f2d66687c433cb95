from django.urls import path

from jobs import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
]
