"""Chains: the jobs a job starts when one of its runs succeeds (Job.on_success) or fails
for good, after its retries (Job.on_failure), and what editing them takes.

The lists are two many-to-many fields of Job, which Job.save() does not write by itself.
So an entry point (the dashboard's form, the admin's, the API) says what they should be
with `job.set_chains(on_success=..., on_failure=...)` before it validates and saves:
- Job.clean() refuses a list that is too long, or that would close a loop (a job that
  starts itself again through any mix of on_success and on_failure), with the message
  at the field (chain_errors);
- Job.save() writes the lists inside its own transaction and puts what changed in the
  same audit-trail entry as the fields (save_pending), so one edit is one record.

The runs themselves are started by the engine (jobs/engine/chains.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.db import models
from django.db.models import Q, Value
from django.db.models.signals import pre_delete
from django.utils.translation import gettext as _

from jobs.models.changes import ChangeAction, JobChange, job_values
from jobs.models.choices import MAX_CHAINED_JOBS

CHAIN_FIELDS = ("on_success", "on_failure")
# The reverse side of each: the jobs that start this one.
REVERSE_FIELDS = {"on_success": "after_success_of", "on_failure": "after_failure_of"}

_PENDING = "_pending_chains"


@dataclass(frozen=True)
class PendingChains:
    """The lists an entry point wants; None leaves that list as it is."""

    on_success: tuple[uuid.UUID, ...] | None
    on_failure: tuple[uuid.UUID, ...] | None


def _ids(jobs: Iterable[Any]) -> tuple[uuid.UUID, ...]:
    """Job ids from jobs or ids, in order, each once."""
    seen: dict[uuid.UUID, None] = {}
    for item in jobs:
        pk = item.pk if isinstance(item, models.Model) else item
        seen[pk if isinstance(pk, uuid.UUID) else uuid.UUID(str(pk))] = None
    return tuple(seen)


def set_pending(
    job: models.Model, on_success: Iterable[Any] | None, on_failure: Iterable[Any] | None
) -> None:
    job.__dict__[_PENDING] = PendingChains(
        None if on_success is None else _ids(on_success),
        None if on_failure is None else _ids(on_failure),
    )


def pending(job: models.Model) -> PendingChains | None:
    return job.__dict__.get(_PENDING)


# --- validation --------------------------------------------------------------------------


def chain_errors(job: models.Model) -> dict[str, str]:
    """{field: message} for pending lists that are too long or would close a loop.

    Costs nothing without pending lists. With them, a walk of the chains from the new
    lists' jobs: two queries per step of the longest chain reached (a loop can only pass
    through this job: the chains as stored have none).
    """
    wanted = pending(job)
    if wanted is None:
        return {}
    errors: dict[str, str] = {}
    for name in CHAIN_FIELDS:
        ids = getattr(wanted, name)
        if ids is None:
            continue
        if len(ids) > MAX_CHAINED_JOBS:
            errors[name] = _("At most %(n)d jobs.") % {"n": MAX_CHAINED_JOBS}
        elif job.pk in ids:
            errors[name] = _("A job cannot start itself.")
    if errors or job._state.adding:
        return errors  # a job not saved yet: no job starts it, so no loop can close
    for name in CHAIN_FIELDS:
        ids = getattr(wanted, name)
        if ids is None:
            continue
        loop = _loop_back(type(job), job.pk, set(ids))
        if loop:
            names = _names(type(job), loop)
            shown = " → ".join([job.name, *(names.get(pk, str(pk)) for pk in loop), job.name])
            errors[name] = _(
                "This would make a loop: %(loop)s. A job cannot start itself again "
                "through its chains."
            ) % {"loop": shown}
    return errors


def _links_from(model: type[models.Model], sources: Iterable[uuid.UUID]) -> list[tuple]:
    """(from, to) of every chain link (either kind) out of these jobs."""
    sources = list(sources)
    links: list[tuple] = []
    for name in CHAIN_FIELDS:
        through = getattr(model, name).through
        links += through.objects.filter(from_job_id__in=sources).values_list(
            "from_job_id", "to_job_id"
        )
    return links


def _loop_back(
    model: type[models.Model], job_id: uuid.UUID, starts: set[uuid.UUID]
) -> list[uuid.UUID]:
    """The path from one of `starts` back to `job_id` through the stored chains (the
    job's own links left out: they are being replaced), or [] if there is none."""
    parent: dict[uuid.UUID, uuid.UUID | None] = dict.fromkeys(starts)
    frontier = list(starts)
    while frontier and job_id not in parent:
        following = []
        for source, target in _links_from(model, frontier):
            if source != job_id and target not in parent:
                parent[target] = source
                following.append(target)
        frontier = following
    if job_id not in parent:
        return []
    path = []
    node = parent[job_id]
    while node is not None:
        path.append(node)
        node = parent[node]
    return path[::-1]


def _names(model: type[models.Model], ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, str]:
    return dict(model._default_manager.filter(pk__in=list(ids)).values_list("pk", "name"))


# --- saving and the audit trail -----------------------------------------------------------


def entries(rows: Iterable[tuple[Any, str]]) -> list[dict[str, str]]:
    """A chain list as the audit trail keeps it: [{"id", "name"}], by name. The name as
    it was, so the record still reads after the job is renamed or deleted."""
    return [
        {"id": str(pk), "name": name}
        for pk, name in sorted(rows, key=lambda row: (row[1], str(row[0])))
    ]


def save_pending(job: models.Model) -> dict[str, list[Any]]:
    """Write the pending lists of a saved job (inside Job.save()'s transaction); returns
    {"on_success": [old, new], ...} for the lists that changed."""
    wanted = job.__dict__.pop(_PENDING, None)
    if wanted is None:
        return {}
    changed: dict[str, list[Any]] = {}
    for name in CHAIN_FIELDS:
        ids = getattr(wanted, name)
        if ids is None:
            continue
        related = getattr(job, name)
        before = list(related.values_list("pk", "name"))
        if {pk for pk, _ in before} == set(ids):
            continue
        related.set(ids)
        after = _names(type(job), ids).items()
        changed[name] = [entries(before), entries(after)]
    return changed


def _record_unchained(sender: type, instance: Any, **kwargs: Any) -> None:
    """A job is being deleted: the jobs that chain to it lose it (their link rows go with
    it), and each says so in its own audit trail."""
    for name, reverse in REVERSE_FIELDS.items():
        for other in getattr(instance, reverse).all():
            before = entries(getattr(other, name).values_list("pk", "name"))
            after = [entry for entry in before if entry["id"] != str(instance.pk)]
            JobChange.record(
                job_id=other.pk,
                job_name=other.name,
                action=ChangeAction.EDIT,
                changes={name: [before, after]},
                snapshot=job_values(other),
            )


pre_delete.connect(_record_unchained, sender="jobs.Job", dispatch_uid="jobs_record_unchained")


# --- the pages ---------------------------------------------------------------------------


class ChainLinks(NamedTuple):
    """A job's chains both ways, for its page: (id, name) pairs by name."""

    on_success: list[tuple[uuid.UUID, str]]
    on_failure: list[tuple[uuid.UUID, str]]
    after_success_of: list[tuple[uuid.UUID, str]]
    after_failure_of: list[tuple[uuid.UUID, str]]


def chain_links(job: models.Model) -> ChainLinks:
    """One query: the link rows from and to the job in both link tables (each side
    through its index), with the other job's name."""
    parts = [
        getattr(type(job), name)
        .through.objects.filter(Q(from_job_id=job.pk) | Q(to_job_id=job.pk))
        .annotate(kind=Value(name))
        .values_list("kind", "from_job_id", "from_job__name", "to_job_id", "to_job__name")
        for name in CHAIN_FIELDS
    ]
    found: dict[str, list[tuple[uuid.UUID, str]]] = {
        name: [] for name in (*CHAIN_FIELDS, *REVERSE_FIELDS.values())
    }
    for kind, source, source_name, target, target_name in parts[0].union(parts[1], all=True):
        if source == job.pk:
            found[kind].append((target, target_name))
        if target == job.pk:
            found[REVERSE_FIELDS[kind]].append((source, source_name))
    return ChainLinks(
        *(sorted(links, key=lambda link: (link[1], str(link[0]))) for links in found.values())
    )
