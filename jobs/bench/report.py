"""The figures of a benchmark as text: one table per scenario, a column per size."""

from __future__ import annotations

from typing import Any

# What a scenario returns: figures (scalars), plus lists of rows for sub-tables.
Result = dict[str, Any]


def format_report(report: dict[str, Any]) -> str:
    """One table per scenario, a column per size; sub-tables for lists of rows."""
    machine = report["machine"]
    out = [
        f"{machine['cpu_count']} CPUs ({machine['cpu_model']}), Python {machine['python']}, "
        f"Django {machine['django']}, {machine['database']} {machine.get('database_version')}, "
        f"commit {(machine.get('git_commit') or '?')[:10]}"
        f"{' (modified)' if machine.get('git_dirty') else ''}, "
        f"load average {_cell(machine.get('load_average'))}"
    ]
    by_scenario: dict[str, list[Result]] = {}
    for result in report["results"]:
        by_scenario.setdefault(result["scenario"], []).append(result)
    for scenario, results in by_scenario.items():
        out += ["", _scenario_table(scenario, results)]
        for result in results:
            out += ["\n" + _rows_table(value) for value in result.values() if _is_rows(value)]
    return "\n".join(out) + "\n"


def _scenario_table(scenario: str, results: list[Result]) -> str:
    keys: list[str] = []
    for result in results:
        keys += [
            key
            for key, value in result.items()
            if key not in keys and key != "scenario" and not _is_rows(value)
        ]
    rows = [[key, *(_cell(result.get(key)) for result in results)] for key in keys]
    return _table([scenario, *("" for _ in results)], rows)


def _rows_table(rows: list[Result]) -> str:
    columns = list(rows[0])
    return _table(columns, [[_cell(row.get(column)) for column in columns] for row in rows])


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, list) and all(isinstance(v, int | float) for v in value):
        if len(value) > 4:  # a series: its ends (--json has every value)
            return f"{value[0]:g} .. {value[-1]:g} ({len(value)} samples)"
        return " ".join(f"{v:g}" for v in value)
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        )
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and isinstance(value[0], dict)
