"""The admin's job form, and the checks the admin adds to it: shell permission, code-owned
fields.
"""

from __future__ import annotations

from typing import Any

from jobs.access.masking import EDITOR_JOB_FIELDS, restore_field
from jobs.models import Job
from jobs.models import code as code_rules
from jobs.models.chains import CHAIN_FIELDS
from jobs.web import code_fields
from jobs.web.chains import ChainFieldsMixin
from jobs.web.forms import JobAlertsForm, job_form_field


def with_shell_check(form_class: Any, user: Any, job: Job | None) -> Any:
    """The admin's job form, judged by the jobs.use_shell rule (jobs.models.gate) on the
    values it cleaned, for `user`: Job.clean() refuses at the executor a job that needs
    the permission (a shell job, a management command other than the harmless ones),
    whether the job is so now or would be after the change. A form posted without an
    executor (a script written before there were executors) keeps the job's."""
    if "executor" in form_class.base_fields:
        form_class.base_fields["executor"].required = False

    class ShellCheckedForm(form_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.instance.acting_user = user

        def clean(self) -> dict[str, Any]:
            cleaned = super().clean()
            if "executor" in self.fields and not cleaned.get("executor"):
                cleaned["executor"] = job.executor if job is not None else "simulated"
            return cleaned

    # The subclass's metaclass made its fields again from the model: keep the admin's.
    ShellCheckedForm.base_fields = form_class.base_fields
    ShellCheckedForm.__name__ = form_class.__name__
    return ShellCheckedForm


def with_code_check(form_class: Any, job: Job | None) -> Any:
    """The admin's job form, refusing a post that changes a field the job's code owns
    (jobs.models.code). Those fields are read-only here, so left out of the form: a
    browser never posts them; a hand-made post that does is refused, saying where to
    change them, rather than quietly ignored."""
    owned = job.code_fields if job is not None else frozenset()
    if not owned:
        return form_class

    class CodeCheckedForm(form_class):  # type: ignore[misc, valid-type]
        def clean(self) -> dict[str, Any]:
            cleaned = super().clean()
            changed = code_fields.posted_changes(self, sorted(owned), job)
            if changed:
                names = ", ".join(changed)
                self.add_error(None, f"{names}: {code_rules.refusal(job)}")
            return cleaned

    CodeCheckedForm.base_fields = form_class.base_fields
    CodeCheckedForm.__name__ = form_class.__name__
    return CodeCheckedForm


class JobAdminForm(ChainFieldsMixin, JobAlertsForm):
    """The admin's job form: the dashboard's handling of the alert fields; the chains are
    judged by Job.clean() and recorded with the save, as on the dashboard
    (jobs.web.chains)."""

    class Meta:
        model = Job
        # The admin builds the form with the fields of its fieldsets (get_form).
        fields = CHAIN_FIELDS
        formfield_callback = job_form_field

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # URL credentials are shown to nobody: masked here, put back from the stored
        # values when sent back as shown (jobs.access.masking.restore_field).
        self.stored = {name: getattr(self.instance, name) for name in EDITOR_JOB_FIELDS}
        if not self.instance._state.adding:
            for name, show in EDITOR_JOB_FIELDS.items():
                if name in self.fields and name != "webhook_url" and self.stored[name]:
                    self.initial[name] = show(self.stored[name])

    def clean_command(self) -> str:
        return restore_field("command", self.cleaned_data.get("command"), self.stored["command"])

    def clean_arguments(self) -> Any:
        return restore_field(
            "arguments", self.cleaned_data.get("arguments"), self.stored["arguments"]
        )
