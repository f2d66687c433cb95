"""A job's operator actions: enable or disable, duplicate, restore a version, set its chains."""

from __future__ import annotations

from typing import Self

from django.core.exceptions import ValidationError

from jobs.access import permissions as access
from jobs.models import chains, changes, gate
from jobs.models.choices import COPY_SUFFIX, NAME_MAX_LENGTH


class JobOperatorActions:
    """Changes an operator makes to a job (the dashboard, the admin and the API call these):
    enabling, copying, restoring a version, its chains. Each saves through Job.save(), so
    it is validated and recorded in the audit trail."""

    def set_active(self, active: bool, *, user: object = None) -> None:
        """Enable or disable the job. Enabling resumes its grid at the next point to come.

        Raises ValidationError when the job cannot be active as it is (a one-off whose
        time has passed), or when `user` may not enable it (jobs.models.gate: a job that
        needs jobs.use_shell); nothing is saved then.
        """
        was_active = self.is_active
        self.is_active = active
        self.acting_user = user
        try:
            self.full_clean()
        except ValidationError:
            self.is_active = was_active
            raise
        self.save()

    def duplicate(self) -> tuple[Self, str | None]:
        """Save a copy named "<name> (copy)"; returns it, and why it was saved disabled.

        A copy that would not validate as active (a one-off whose time has passed) is
        saved disabled rather than refused, so the operator can fix the time and enable
        it. Raises ValidationError when the copy is invalid even disabled.
        """
        copy = type(self)(
            name=self.name[: NAME_MAX_LENGTH - len(COPY_SUFFIX)] + COPY_SUFFIX,
            **{
                field.name: getattr(self, field.name)
                for field in type(self)._meta.concrete_fields
                if field.editable and not field.primary_key and field.name != "name"
            },
        )
        disabled_because = None
        try:
            copy.full_clean()
        except ValidationError as error:
            if not copy.is_active:
                raise
            disabled_because = " ".join(error.messages)
            copy.is_active = False
            copy.full_clean()
        copy.save()  # computes anchor_at and next_run_at
        return copy, disabled_because

    def restore(self, version: changes.JobChange, *, user: object = None) -> bool:
        """Put back the fields as they were after `version` (a JobChange of this job);
        False when they are so already (nothing is saved or recorded then).

        Validated like any edit; raises ValidationError and leaves the job as it was
        when that version would not be valid now (a one-off time since passed, say).
        With `user`, raises PermissionDenied when the job, as it is or as it would be,
        needs jobs.use_shell and the user has not got it (see may_restore). Recorded as
        a "restore".
        """
        if user is not None and not self.may_restore(version, user):
            raise gate.ShellPermissionRequired(gate.change_message())
        # The fields the code owns stay as the code declares them.
        editable = set(changes.audited_fields(type(self))) - self.code_fields
        wanted = {
            name: self._meta.get_field(name).to_python(value)
            for name, value in (version.snapshot or {}).items()
            if name in editable
        }
        before = {name: getattr(self, name) for name in wanted}
        if before == wanted:
            return False
        for name, value in wanted.items():
            setattr(self, name, value)
        self.acting_user = user
        try:
            self.full_clean()
        except ValidationError:
            for name, value in before.items():
                setattr(self, name, value)
            raise
        self.save(change_action=changes.ChangeAction.RESTORE)
        return True

    def may_restore(self, version: changes.JobChange, user: object) -> bool:
        """Whether `user` may restore `version`: jobs.use_shell when the job, as it is or
        as that version was, runs shell commands (or a dangerous management command)."""
        if access.may_use_shell(user):
            return True
        return not (gate.needs_use_shell(self) or gate.needs_use_shell(version.snapshot or {}))

    def set_chains(self, *, on_success=None, on_failure=None) -> None:  # type: ignore[no-untyped-def]
        """Say what the chain lists should be (jobs or ids; None leaves a list as it is).

        Validated by full_clean() (too many, or a loop), written and recorded in the
        audit trail by the next save(), in its transaction (jobs/models/chains.py).
        """
        chains.set_pending(self, on_success, on_failure)
