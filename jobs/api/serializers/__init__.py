"""Serializers of the API, one module per resource: jobs.py (the job, validated by
Job.full_clean() like the forms and the admin), runs.py (runs, their delivery attempts,
"run now"), tasks.py (registered Python tasks), changes.py (a job's audit trail),
filters.py (the lists' query parameters), preview.py (the schedule preview); fields.py
holds what they share.

The names below are imported from here by the views and the policy.
"""

from jobs.api.serializers.changes import ChangesField, JobChangeSerializer
from jobs.api.serializers.fields import (
    ArgumentsField,
    BoundDateTimeField,
    ZonedDateTimeField,
    field_errors,
)
from jobs.api.serializers.filters import (
    SEARCH_MAX_LENGTH,
    JobFilterSerializer,
    JobRunFilterSerializer,
    RunFilterSerializer,
)
from jobs.api.serializers.jobs import JobSerializer
from jobs.api.serializers.preview import (
    OccurrenceSerializer,
    SchedulePreviewQuerySerializer,
    SchedulePreviewSerializer,
)
from jobs.api.serializers.runs import (
    LOG_OMITTED_MARK,
    NotificationAttemptSerializer,
    RunDetailSerializer,
    RunNowSerializer,
    RunSerializer,
)
from jobs.api.serializers.tasks import TaskParameterSerializer, TaskSerializer

__all__ = [
    "LOG_OMITTED_MARK",
    "SEARCH_MAX_LENGTH",
    "ArgumentsField",
    "BoundDateTimeField",
    "ChangesField",
    "JobChangeSerializer",
    "JobFilterSerializer",
    "JobRunFilterSerializer",
    "JobSerializer",
    "NotificationAttemptSerializer",
    "OccurrenceSerializer",
    "RunDetailSerializer",
    "RunFilterSerializer",
    "RunNowSerializer",
    "RunSerializer",
    "SchedulePreviewQuerySerializer",
    "SchedulePreviewSerializer",
    "TaskParameterSerializer",
    "TaskSerializer",
    "ZonedDateTimeField",
    "field_errors",
]
