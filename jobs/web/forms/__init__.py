"""Forms of the screens, one module each (or one family: the filters of the lists).

The rules of a valid job live in Job (field validators and Job.clean()); a ModelForm
runs them through full_clean() and puts each message at its field. The forms here
only add what is theirs: widgets, layout, and reading text input (local date-times,
filters).

- job.py: the job form (JobForm), its steps of set-up and of cleaning;
- fields.py: what the job form offers (executors, tasks) and its inputs' bounds;
- sections.py: the argument fields of each kind of job (read from jobs.kinds);
- layout.py: where the job form's fields go (markup in jobs/templates/jobs/);
- alerts.py: the alert fields both job forms share (the dashboard's and the admin's);
- run.py: "Run now" with arguments; preview.py: the schedule preview's fields;
- filters.py: the job list's, history's and Upcoming page's filters.

The names below are imported from here by the views and the admin.
"""

from jobs.web.forms.alerts import JobAlertsForm, job_form_field
from jobs.web.forms.fields import offered_executors, task_choices
from jobs.web.forms.filters import HistoryFilterForm, JobFilterForm, UpcomingForm
from jobs.web.forms.job import SHOW_TASK, JobForm
from jobs.web.forms.preview import SchedulePreviewForm
from jobs.web.forms.run import RunNowForm

__all__ = [
    "SHOW_TASK",
    "HistoryFilterForm",
    "JobAlertsForm",
    "JobFilterForm",
    "JobForm",
    "RunNowForm",
    "SchedulePreviewForm",
    "UpcomingForm",
    "job_form_field",
    "offered_executors",
    "task_choices",
]
