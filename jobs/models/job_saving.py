"""How a job is loaded and saved: what changed since it was loaded, and the audit trail."""

from __future__ import annotations

from django.db import router, transaction

from jobs.models import chains, changes
from jobs.models.choices import (
    ENGINE_COUNTER_FIELDS,
    PLANNING_FIELDS,
    SCHEDULE_FIELDS,
    SCHEDULER_FIELDS,
    STREAK_RULE_FIELDS,
)


class JobSaving:
    """Loading and saving a job: the schedule and the audited values as loaded, so that
    save() knows what changed, moves the job on its new schedule, leaves the scheduler's
    fields alone, and records the change in the audit trail in the same transaction."""

    @classmethod
    def from_db(cls, db, field_names, values, *args, **kwargs):  # type: ignore[no-untyped-def]
        # *args/**kwargs: Django 6.1 passes fetch_mode, 5.2 does not.
        instance = super().from_db(db, field_names, values, *args, **kwargs)
        # Remember the schedule as loaded, so save() knows whether it changed. With a
        # schedule field deferred (.only()/.defer()) reading it here would load it (and
        # recurse through from_db), so the snapshot is taken at save time instead.
        deferred = instance.get_deferred_fields()
        if not deferred & set(SCHEDULE_FIELDS):
            instance._loaded_schedule = instance._schedule_snapshot()
        if not deferred & set(PLANNING_FIELDS):
            instance._loaded_planning = instance._planning_snapshot()
        # The audited values as loaded, so save() records what it changed (jobs.models.
        # changes); read at save time instead when some were deferred.
        if not deferred & set(changes.audited_fields(cls)):
            instance._loaded_values = changes.job_values(instance)
        return instance

    def refresh_from_db(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().refresh_from_db(*args, **kwargs)
        # The values loaded now are the stored ones: save() reads them again if needed.
        self.__dict__.pop("_loaded_values", None)

    def _fields_but(self, excluded: tuple[str, ...]) -> list[str]:
        return [
            f.name
            for f in self._meta.concrete_fields
            if not f.primary_key and f.name not in excluded
        ]

    def _values_as_loaded(self) -> dict | None:
        """The audited values as loaded, or as stored now if they were not loaded (None
        for a job not stored yet)."""
        if "_loaded_values" not in self.__dict__:
            fields = changes.audited_fields(type(self))
            stored = type(self).objects.filter(pk=self.pk).values(*fields).first()
            return (
                None
                if stored is None
                else {name: changes.json_value(value) for name, value in stored.items()}
            )
        return self._loaded_values

    def _stored_schedule(self) -> tuple | None:
        """The schedule as loaded, or as stored now if it was not loaded."""
        if "_loaded_schedule" not in self.__dict__ and not self._state.adding:
            stored = type(self).objects.filter(pk=self.pk).values_list(*SCHEDULE_FIELDS).first()
            self._loaded_schedule = tuple(stored) if stored is not None else None
        return getattr(self, "_loaded_schedule", None)

    def _schedule_snapshot(self) -> tuple:
        return tuple(getattr(self, name) for name in SCHEDULE_FIELDS)

    def _planning_snapshot(self) -> tuple:
        return tuple(getattr(self, name) for name in PLANNING_FIELDS)

    def _planning_changed(self) -> bool:
        """Whether the calendar or its policy changed (next_run_at is planned again)."""
        loaded = getattr(self, "_loaded_planning", None)
        return loaded is not None and loaded != self._planning_snapshot()

    def _schedule_changed(self) -> bool:
        loaded = self._stored_schedule()
        return loaded is None or loaded != self._schedule_snapshot()

    def save(self, *args, change_action: str | None = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
        """Save, and record what changed in the audit trail (jobs.models.changes) in the
        same transaction. `change_action` names the change when it is not a plain
        create, edit, enable or disable (a restore)."""
        self.clear_unused_schedule_fields()
        adding = self._state.adding
        explicit_fields = kwargs.get("update_fields")
        old = None if adding else self._values_as_loaded()
        if adding or self._schedule_changed() or self._planning_changed():
            self.refresh_schedule()
            if not adding and explicit_fields is None:
                kwargs["update_fields"] = self._fields_but(ENGINE_COUNTER_FIELDS)
            elif not adding:
                # The fields named, and where the new schedule puts the job.
                kwargs["update_fields"] = list(
                    dict.fromkeys([*explicit_fields, "anchor_at", "next_run_at"])
                )
        elif explicit_fields is None:
            # Leave the scheduler's fields alone: this copy may have been loaded before
            # the scheduler last moved them.
            kwargs["update_fields"] = self._fields_but(SCHEDULER_FIELDS + ENGINE_COUNTER_FIELDS)
        written = STREAK_RULE_FIELDS if explicit_fields is None else explicit_fields
        if old is not None and any(
            old.get(name) != getattr(self, name) for name in STREAK_RULE_FIELDS if name in written
        ):
            # Counted under other rules (or not at all, with alerts off): start afresh.
            self.consecutive_failures = 0
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = [*kwargs["update_fields"], "consecutive_failures"]
        with transaction.atomic(using=kwargs.get("using") or router.db_for_write(type(self))):
            super().save(*args, **kwargs)
            chained = chains.save_pending(self)
            changes.record_save(self, old, change_action, explicit_fields, chained)
        self._loaded_schedule = self._schedule_snapshot()
        self._loaded_planning = self._planning_snapshot()
        self._loaded_values = changes.job_values(self)
