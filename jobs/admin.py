from django.contrib import admin

from jobs.models import Job, JobHistory

admin.site.register(Job)
admin.site.register(JobHistory)
