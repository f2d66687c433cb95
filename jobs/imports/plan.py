"""Bring another scheduler's schedules over: `manage.py importschedules` (docs/migrating.md).

A reader (beat.py, crontab.py, djangoq.py) gives the source's entries as jobs' fields;
this module plans and applies them, in one transaction:

- each entry is one job, found by its source and key (Job.import_source, Job.import_key,
  unique together while set): created, updated in place, or left unchanged;
- an entry whose record (the entry as read, Job.import_record) is the one last imported is
  unchanged, whatever was edited on the dashboard since: the import owns a job's fields
  only when its source changed. Then every field the entry gives is written through
  Job.save(), so the audit trail records it (channel "import"), but is_active only when
  the source's own enabled flag changed: a job an operator disabled stays so;
- a job whose entry is gone from the source is deactivated, never deleted;
- every job is validated by the model's own rules (Job.full_clean): an entry it refuses
  is skipped with the model's words, like the entries the reader could not translate.
  With `strict`, any skipped entry stops the import and nothing is changed;
- with `disable_source`, the source stops running what was imported, in the same
  transaction (the source's, nested in this one when its tables are in another database).
"""

from __future__ import annotations

from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.db import transaction

from jobs.imports.entries import ENABLED, Entry, Reading, Skipped, Source
from jobs.models import Channel, Job, acting
from jobs.models.changes import audited_fields

CREATE = "create"
UPDATE = "update"
UNCHANGED = "unchanged"
DEACTIVATE = "deactivate"
SKIP = "skip"

_VERBS = {
    CREATE: ("created", "would create"),
    UPDATE: ("updated", "would update"),
    UNCHANGED: ("unchanged", "unchanged"),
    DEACTIVATE: ("deactivated", "would deactivate"),
    SKIP: ("skipped", "would skip"),
}


class ImportRefused(Exception):
    """With --strict: entries would be skipped; `skipped` says which and why. Nothing
    was changed."""

    def __init__(self, skipped: tuple[Skipped, ...]) -> None:
        self.skipped = skipped
        super().__init__("\n".join(f"{s.label}: {s.reason}" for s in skipped))


class Change(NamedTuple):
    """What the import did (or, not applied, would do) to one entry's job."""

    action: str
    key: str
    label: str
    fields: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def line(self, applied: bool) -> str:
        text = f"{_VERBS[self.action][0 if applied else 1]} {self.label}"
        if self.action == UPDATE:
            text += ": " + (", ".join(self.fields) or "its record only")
        elif self.action == DEACTIVATE:
            text += ": gone from the source"
        elif self.action == SKIP:
            return f"{text}: {'; '.join(self.notes)}"
        return "; ".join([text, *self.notes])


class ImportReport(NamedTuple):
    """Every entry's Change (skipped ones included); `applied`: written;
    `source_disabled`: how many entries the source no longer runs."""

    source: str
    changes: tuple[Change, ...]
    applied: bool
    source_disabled: int = 0

    @property
    def differs(self) -> bool:
        """The jobs are not (were not) what the source says: something to create,
        update or deactivate."""
        return any(change.action not in (UNCHANGED, SKIP) for change in self.changes)

    def count(self, action: str) -> int:
        return sum(1 for change in self.changes if change.action == action)

    def lines(self) -> list[str]:
        lines = [change.line(self.applied) for change in self.changes]
        counts = ", ".join(
            f"{self.count(action)} {_VERBS[action][0]}"
            for action in (CREATE, UPDATE, UNCHANGED, DEACTIVATE, SKIP)
        )
        prefix = "" if self.applied else "dry run, nothing changed: "
        lines.append(f"{prefix}{self.source}: {counts}")
        if self.source_disabled:
            lines.append(f"{self.source_disabled} entries switched off in the source")
        return lines


class _Planned(NamedTuple):
    change: Change
    job: Job | None
    written: tuple[str, ...]
    entry: Entry | None


def run_import(
    source: Source,
    *,
    apply: bool = True,
    disable_source: bool = False,
    strict: bool = False,
    actor: str = "importschedules",
    team: int | None = None,
) -> ImportReport:
    """Import `source` (or, not `apply`, say what that would do). Raises SourceError or
    ImportRefused, changing nothing. `team`: the group whose team the jobs imported
    become (`--team`); None leaves an imported job's team as it is (a new one: the
    site's)."""
    with acting(None, Channel.IMPORT, actor), transaction.atomic(), source.atomic():
        # Read in the source's transaction: what is switched off is what was read.
        reading = source.read()
        planned = _plan(reading, team)
        skipped = tuple(
            Skipped(p.change.key, p.change.label, "; ".join(p.change.notes))
            for p in planned
            if p.change.action == SKIP
        )
        if strict and skipped:
            raise ImportRefused(skipped)
        changes = tuple(p.change for p in planned)
        if not apply:
            return ImportReport(reading.source, changes, applied=False)
        disabled = 0
        if disable_source:
            # The source first: a failure in the jobs below rolls this back too.
            keys = [p.entry.key for p in planned if p.entry is not None and p.entry.enabled]
            source.disable(keys)
            disabled = len(keys)
            for p in planned:
                if p.entry is not None and p.entry.enabled and p.job is not None:
                    p.job.import_record = source.disabled_record(p.entry.record)
        for p in planned:
            _apply(p, disable_source)
        return ImportReport(reading.source, changes, applied=True, source_disabled=disabled)


def _plan(reading: Reading, team: int | None = None) -> list[_Planned]:
    # Locked in key order: imports run at once wait for each other here.
    stored = {
        job.import_key: job
        for job in Job.objects.select_for_update()
        .filter(import_source=reading.source, import_key__isnull=False)
        .order_by("import_key")
    }
    planned = [
        _plan_entry(reading.source, entry, stored.get(entry.key), team) for entry in reading.entries
    ]
    planned.extend(
        _Planned(Change(SKIP, skipped.key, skipped.label, notes=(skipped.reason,)), None, (), None)
        for skipped in reading.skipped
    )
    present = {entry.key for entry in reading.entries} | {s.key for s in reading.skipped}
    for key, job in stored.items():
        if key not in present and job.import_record is not None:
            written = ("is_active",) if job.is_active else ()
            job.is_active = False
            job.import_record = None
            planned.append(_Planned(Change(DEACTIVATE, key, job.name), job, written, None))
    return planned


def _plan_entry(source: str, entry: Entry, stored: Job | None, team: int | None) -> _Planned:
    values = entry.values if team is None else {**entry.values, "team_id": team}
    if stored is None:
        job = Job(import_source=source, import_key=entry.key, import_record=entry.record, **values)
        job.is_active = entry.enabled
        return _validated(CREATE, entry, job, ())
    if stored.import_record == entry.record and team in (None, stored.team_id):
        return _Planned(Change(UNCHANGED, entry.key, entry.label), stored, (), entry)
    audited = audited_fields(Job)
    before = {name: getattr(stored, name) for name in audited}
    for name, value in values.items():
        setattr(stored, name, value)
    last_enabled = (stored.import_record or {}).get(ENABLED)
    if stored.import_record is None or last_enabled != entry.enabled:
        stored.is_active = entry.enabled
    stored.import_record = entry.record
    written = tuple(name for name in audited if getattr(stored, name) != before[name])
    return _validated(UPDATE, entry, stored, written)


def _validated(action: str, entry: Entry, job: Job, written: tuple[str, ...]) -> _Planned:
    """The job checked by the model's rules; refused, the entry is skipped with them.
    A job valid only disabled (a one-off whose time has passed) is kept disabled."""
    notes = list(entry.notes)
    try:
        _full_clean(job)
    except ValidationError as error:
        reason = _messages(error)
        if job.is_active:
            job.is_active = False
            try:
                _full_clean(job)
            except ValidationError:
                pass
            else:
                notes.append(f"imported disabled: {reason}")
                if "is_active" not in written and action == UPDATE:
                    written = (*written, "is_active")
                change = Change(action, entry.key, entry.label, written, tuple(notes))
                return _Planned(change, job, written, entry)
        return _Planned(Change(SKIP, entry.key, entry.label, notes=(reason,)), None, (), None)
    change = Change(action, entry.key, entry.label, written, tuple(notes))
    return _Planned(change, job, written, entry)


def _full_clean(job: Job) -> None:
    """Job.full_clean() as every entry point calls it, but for the check constraints:
    Job.clean() (jobs/models/job_rules.py) gives every one of their rules with its message,
    and the database still holds each row to them, while Django would check each with a
    query of its own, 15 per job (72 of the 75 ms an entry cost: cProfile of an import of
    300 beat tasks). The key is left out: the database decides its uniqueness."""
    job.full_clean(exclude=["import_key"], validate_constraints=False)


def _messages(error: ValidationError) -> str:
    if not hasattr(error, "error_dict"):
        return " ".join(error.messages)
    return "; ".join(
        f"{field}: {' '.join(messages)}" if field != "__all__" else " ".join(messages)
        for field, messages in error.message_dict.items()
    )


def _apply(planned: _Planned, disable_source: bool) -> None:
    job = planned.job
    if job is None:
        return
    action = planned.change.action
    if action == CREATE:
        job.save()
    elif action == UNCHANGED:
        if disable_source and planned.entry is not None and planned.entry.enabled:
            job.save(update_fields=["import_record"])
    else:
        job.save(update_fields=[*planned.written, "import_record", "updated_at"])
