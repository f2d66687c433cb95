"""The manual in docs/ stays true to the code: the README stays short, points into it and
its API example works; the Configuration page has a row for every environment variable
the site reads; the architecture page's layer map is the import contract's
(.importlinter), in its order.

That every link and heading resolves is `mkdocs build --strict`'s job (.ci/run).
"""

from __future__ import annotations

import ast
import configparser
import json
import re
from pathlib import Path

import pytest

from jobs.models import Job

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"


def _table_rows(text: str) -> list[list[str]]:
    """The cells of each row of the Markdown tables in `text` (header rows included)."""
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|") and not set(line) <= set("|-: ")
    ]


def test_the_readme_is_short_and_links_only_to_pages_that_exist():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 220
    links = re.findall(r"\]\((docs/[^)#]*)", readme)
    assert links, "the README's index into the docs"
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_every_page_in_docs_is_in_the_manual_s_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {path.name for path in DOCS.glob("*.md")}
    assert {page for page in pages if f": {page}" not in nav} == set()


def _environment_reads() -> set[str]:
    """The variables scheduler_site/settings.py reads: env_*("NAME", ...) calls."""
    tree = ast.parse((ROOT / "scheduler_site" / "settings.py").read_text())
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith("env_")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def test_the_configuration_page_has_a_row_for_every_environment_variable():
    rows = _table_rows((DOCS / "configuration.md").read_text())
    documented = {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row[0])}
    read = _environment_reads() | {"ENV_FILE"}  # ENV_FILE: scheduler_site/dotenv.py
    assert len(read) > 50  # the scan finds the reads
    assert read - documented == set(), "read by the settings, no row in docs/configuration.md"
    assert documented - read == set(), "a row in docs/configuration.md, read by no setting"


def _contract_layers() -> list[set[str]]:
    """The layers of .importlinter's layers contract, top first, as module names."""
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    text = config["importlinter:contract:layers"]["layers"]
    return [
        {name.strip() for name in line.split("|")} for line in text.splitlines() if line.strip()
    ]


def _module_name(path: str) -> str:
    """`jobs/engine/` or `jobs/conf.py` as jobs.engine, jobs.conf."""
    return path.removesuffix("/").removesuffix(".py").replace("/", ".")


def test_the_architecture_page_s_layer_map_is_the_import_contract_in_its_order():
    rows = _table_rows((DOCS / "architecture.md").read_text())
    header, body = rows[0], rows[1:]
    assert header[:2] == ["layer", "package"]
    layers = _contract_layers()
    layer_of = {module: index for index, names in enumerate(layers) for module in names}
    named: list[set[str]] = []
    for row in body:
        paths = re.findall(r"`(jobs/[^`]*)`", row[1])
        assert paths, row
        for path in paths:
            assert (ROOT / path).exists(), f"docs/architecture.md names {path}, which is gone"
        # A package's subfolder (jobs/management/commands/) stands for its package.
        named.append({_module_name("/".join(path.split("/")[:2])) for path in paths})
    in_map = set().union(*named)
    assert set(layer_of) - in_map == set(), "in .importlinter, not in docs/architecture.md"
    # Modules beside a layer but outside the contract (a package's checks, say) may be
    # named; every one the contract lists must sit in a row no higher than its layer
    # allows: the rows run top to bottom as the layers do.
    row_layers = [
        sorted(layer_of[module] for module in modules if module in layer_of) for modules in named
    ]
    flat = [index for indexes in row_layers for index in indexes]
    assert flat == sorted(flat), "the rows of docs/architecture.md run as .importlinter's layers"


@pytest.mark.django_db
def test_the_readme_s_api_example_creates_the_job_it_says(admin_client):
    readme = (ROOT / "README.md").read_text()
    block = readme.split("**The API.**", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    body = json.loads(block.split("-d '", 1)[1].split("'", 1)[0])
    response = admin_client.post("/api/v1/jobs/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    job = Job.objects.get(pk=response.json()["id"])
    assert (job.executor, job.command, job.cron_expression, job.timezone) == (
        body["executor"],
        body["command"],
        body["cron_expression"],
        body["timezone"],
    )
