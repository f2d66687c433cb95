"""Teams for the jobs declared in code and imported: `@register(team=...)`, `syncjobs
--team` and `importschedules --team`, each by a group's name; an unknown group is a
clear error and nothing is changed."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from jobs.models import Job, JobChange
from jobs.tests import personas
from jobs.tests.declaring import TASK, code_job, syncjobs

pytestmark = pytest.mark.django_db


def test_a_declaration_names_its_team(clock, declare) -> None:  # type: ignore[no-untyped-def]
    team_a = personas.team("A")
    declare(every=timedelta(minutes=10), team="Team A")
    assert syncjobs().status == 0
    job = code_job()
    assert job.team_id == team_a.pk
    # The code owns it now: the forms and the API refuse to change it.
    assert "team" in job.code_fields
    # Its team's viewer sees it; another team's does not.
    url = f"/jobs/{job.pk}/"
    assert personas.signed_in(personas.team_viewer("A")).get(url).status_code == 200
    assert personas.signed_in(personas.team_viewer("B")).get(url).status_code == 404


def test_a_declaration_naming_no_group_changes_nothing(clock, declare) -> None:  # type: ignore[no-untyped-def]
    declare(every=timedelta(minutes=10), team="Team Nobody")
    synced = syncjobs()
    assert synced.status == 2
    assert "team= names no group: 'Team Nobody'." in synced.output
    assert "nothing was changed" in synced.output
    assert not Job.objects.exists()


def test_syncjobs_team_is_the_team_of_the_declarations_naming_none(clock, declare) -> None:  # type: ignore[no-untyped-def]
    team_a, team_b = personas.team("A"), personas.team("B")
    report = declare(every=timedelta(minutes=10), key="plain")
    declare(function=report, every=timedelta(hours=1), key="own", team="Team B")
    assert syncjobs("--team", "Team A").status == 0
    assert code_job(f"{TASK}:plain").team_id == team_a.pk
    assert code_job(f"{TASK}:own").team_id == team_b.pk  # its team= wins
    # A sync without --team (runscheduler's at start) leaves their team as it is.
    synced = syncjobs()
    assert "0 updated, 2 unchanged" in synced.output
    assert code_job(f"{TASK}:plain").team_id == team_a.pk
    # --team is not declared: the operator may still change it.
    assert "team" not in code_job(f"{TASK}:plain").code_fields


def test_syncjobs_team_naming_no_group_changes_nothing(clock, declare) -> None:  # type: ignore[no-untyped-def]
    declare(every=timedelta(minutes=10))
    synced = syncjobs("--team", "Team Nobody")
    assert synced.status == 2
    assert "--team names no group: 'Team Nobody'." in synced.output
    assert not Job.objects.exists() and not JobChange.objects.exists()


CRONTAB = "30 2 * * * /usr/local/bin/backup.sh\n0 9 * * 1-5 echo morning\n"


def _import(path: Path, *args: str) -> str:
    out = StringIO()
    call_command("importschedules", "--from", "crontab", str(path), *args, stdout=out)
    return out.getvalue()


def test_importschedules_team_gives_the_imported_jobs_a_team(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.JOBS_SHELL_ENABLED = True
    team_a, team_b = personas.team("A"), personas.team("B")
    path = tmp_path / "crontab"
    path.write_text(CRONTAB)
    _import(path, "--team", "Team A")
    assert set(Job.objects.values_list("team_id", flat=True)) == {team_a.pk}
    # Again without --team: their team stays; with another: they move, in place.
    assert "0 created, 0 updated, 2 unchanged" in _import(path)
    assert set(Job.objects.values_list("team_id", flat=True)) == {team_a.pk}
    moved = _import(path, "--team", "Team B")
    assert "team_id" in moved and Job.objects.count() == 2
    assert set(Job.objects.values_list("team_id", flat=True)) == {team_b.pk}


def test_importschedules_team_naming_no_group_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "crontab"
    path.write_text(CRONTAB)
    with pytest.raises(CommandError, match="--team names no group: 'Team Nobody'") as refused:
        _import(path, "--team", "Team Nobody")
    assert refused.value.returncode == 2
    assert "nothing was changed" in str(refused.value)
    assert not Job.objects.exists()
