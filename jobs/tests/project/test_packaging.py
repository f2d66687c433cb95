"""The app as a package: every setting it reads has a default of its own, its system
checks pass with none of them set, its declared dependencies are the site's (Huey, redis-py
and psycopg only as extras), and it states its licence and the versions it supports.

Building the wheel and installing it into a fresh virtualenv is scripts/check-host's
job (CI runs it): it takes a minute and the network's packages.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
from django.conf import global_settings
from django.core import checks

from jobs import conf

pytestmark = pytest.mark.once  # the same on every database and Django (pytest.ini)

ROOT = Path(__file__).resolve().parents[3]
APP = ROOT / "jobs"
# Django's own settings (SETTINGS_MODULE: the module's name, which Django sets).
DJANGO_SETTINGS = frozenset(name for name in dir(global_settings) if name.isupper()) | {
    "SETTINGS_MODULE"
}


def _app_modules() -> list[Path]:
    return [
        path
        for path in sorted(APP.rglob("*.py"))
        if path.relative_to(APP).parts[0] not in ("tests", "migrations")
    ]


def _settings_reads(tree: ast.AST) -> list[tuple[int, str, bool]]:
    """(line, name, has a default) for each project setting read in `tree`: attribute
    loads `settings.NAME`, `getattr(settings, "NAME"[, default])`, conf.setting("NAME")."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id == "settings"
            and node.attr.isupper()
        ):
            found.append((node.lineno, node.attr, node.attr in DJANGO_SETTINGS))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            args = node.args
            if (
                name == "getattr"
                and len(args) >= 2
                and isinstance(args[0], ast.Name)
                and args[0].id == "settings"
                and isinstance(args[1], ast.Constant)
            ):
                setting = args[1].value
                found.append((node.lineno, setting, len(args) == 3 or setting in DJANGO_SETTINGS))
            elif name == "setting" and args and isinstance(args[0], ast.Constant):
                found.append((node.lineno, args[0].value, args[0].value in conf.DEFAULTS))
    return found


def test_every_setting_the_app_reads_has_a_default():
    """A project that sets none of the app's settings works: each is read through
    jobs.conf.setting (with its default in conf.DEFAULTS), with getattr and a default,
    or is one of Django's own."""
    missing = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in _app_modules()
        for line, name, has_default in _settings_reads(ast.parse(path.read_text()))
        if not has_default
    ]
    assert missing == []


def test_the_app_reads_its_own_settings_only_through_the_typed_accessors_of_conf():
    """One way to read a setting: jobs.conf's functions. Elsewhere, a JOBS_* setting (or
    another of conf.DEFAULTS) read by name is a second way, with its own type and default.
    Benchmarks may set settings; reading Django's own (DEBUG, TIME_ZONE...) is Django's."""
    elsewhere = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in _app_modules()
        if path.relative_to(APP).as_posix() != "conf.py"
        for line, name, _default in _settings_reads(ast.parse(path.read_text()))
        if name in conf.DEFAULTS or name.startswith("JOBS_")
    ]
    assert elsewhere == []


def test_the_scan_finds_reads_without_a_default():
    tree = ast.parse(
        "settings.JOBS_NEW\nsettings.DEBUG\ngetattr(settings, 'JOBS_X')\n"
        "getattr(settings, 'JOBS_Y', 1)\nconf.setting('JOBS_NOT_KNOWN')\nsettings.JOBS_Z = 1\n"
    )
    assert sorted(_settings_reads(tree)) == [
        (1, "JOBS_NEW", False),
        (2, "DEBUG", True),
        (3, "JOBS_X", False),
        (4, "JOBS_Y", True),
        (5, "JOBS_NOT_KNOWN", False),
    ]


def test_every_jobs_setting_of_the_site_has_a_default_in_the_app():
    from scheduler_site import settings as site

    names = {name for name in dir(site) if name.startswith("JOBS_")}
    assert names - set(conf.DEFAULTS) == set()


def test_the_system_checks_pass_without_any_of_the_apps_settings(settings):
    for name in conf.DEFAULTS:
        if hasattr(settings, name):
            delattr(settings, name)
    assert conf.setting("JOBS_LEASE_SECONDS") == conf.DEFAULTS["JOBS_LEASE_SECONDS"]
    problems = checks.run_checks(include_deployment_checks=False)
    assert [p for p in problems if p.level >= checks.ERROR] == []


def test_an_unknown_setting_is_an_error_not_none():
    with pytest.raises(KeyError):
        conf.setting("JOBS_NO_SUCH_THING")


def _requirement_lines(path: Path) -> dict[str, str]:
    lines = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#")[0].strip()
        if line and not line.startswith("-"):
            name = line.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip()
            lines[name.lower()] = line.replace(" ", "")
    return lines


def test_the_packages_dependencies_are_the_sites_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # mysqlclient (the [mysql] extra) builds against a C library, which the site's
    # default install (SQLite) must not need: it is pinned in requirements-dev.txt.
    required = {
        **_requirement_lines(ROOT / "requirements-dev.txt"),
        **_requirement_lines(ROOT / "requirements.txt"),
    }
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    for dependency in declared:
        name = dependency.split(">")[0].split("<")[0].split("[")[0].strip().lower()
        assert required.get(name) == dependency.replace(" ", ""), dependency


def test_the_package_has_its_licence_and_says_which_versions_it_supports():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License\n")
    classifiers = set(project["classifiers"])
    assert {"Framework :: Django :: 5.2", "Programming Language :: Python :: 3.11"} <= classifiers
    assert project["requires-python"] == ">=3.11"


def test_huey_redis_and_psycopg_are_extras_not_dependencies():
    """A project without Huey or PostgreSQL installs neither (the app never imports them
    then: test_host_without_huey.py)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {
        dependency.split(">")[0].split("[")[0].strip().lower()
        for dependency in project["dependencies"]
    }
    assert names & {"huey", "redis", "psycopg", "django-axes"} == set()
    extras = project["optional-dependencies"]
    assert [d.split(">")[0] for d in extras["huey"]] == ["huey", "redis"]
    assert extras["postgres"][0].startswith("psycopg")
    assert extras["axes"][0].startswith("django-axes")
