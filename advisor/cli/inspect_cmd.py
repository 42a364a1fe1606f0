"""``advisor show``, ``plugins``, ``facts`` and ``schema``: render the rows of
``advisor.report.tables`` (rich tables, or JSON with ``--json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from advisor.cli import common
from advisor.cli.boundary import boundary, out, warn
from advisor.cli.render import console, print_line, print_table, rich_table


@boundary
def show(profile: Optional[Path] = common.ProfileOpt, json_: bool = common.JsonOpt) -> None:
    """Show a profile: recommendations, verifications, evidence summaries and findings."""
    from advisor.report.tables import show_report

    prof = common.load(profile)
    if json_:
        out(prof.model_dump_json(indent=2, exclude_none=True) + "\n")
        return
    rep = show_report(prof)
    con = console(soft_wrap=False)
    print_line(con, rep.heading)
    con.print(rich_table(rep.probes))
    if print_table(con, rep.recommendations):
        # the rationales as lines (they hold the per-size figures and what stability means)
        con.print("Why", style="italic", markup=False, highlight=False)
        for line in rep.rationales:
            print_line(con, line, soft_wrap=True)
    else:
        con.print("Recommendations: none", style="italic", markup=False, highlight=False)
    print_table(con, rep.verifications)
    print_table(con, rep.evidence)
    # findings as lines, not table cells: remedies hold settings to copy, which a table would
    # break in the middle of a value
    if not rep.findings:
        return
    con.print("Findings", style="italic", markup=False, highlight=False)
    for line, remedy in rep.findings:
        print_line(con, line, soft_wrap=True)
        if remedy:
            print_line(con, f"    remedy: {remedy}", soft_wrap=True)


@boundary
def plugins(json_: bool = common.JsonOpt) -> None:
    """List plugins, what each contributes, and those that failed to load (with the error)."""
    from advisor.plugins import collect, disabled_from_env, make_plugin_manager
    from advisor.report.tables import plugin_rows, plugin_table

    pm = make_plugin_manager()
    rows = plugin_rows(collect(pm), disabled=disabled_from_env(), origins=pm.origins)
    if json_:
        import json

        out(json.dumps(rows, indent=2) + "\n")
        return
    console(soft_wrap=True).print(rich_table(plugin_table(rows)))


@boundary
def facts(json_: bool = common.JsonOpt) -> None:
    """Detect and print the machine facts."""
    from advisor.facts import detect
    from advisor.plugins import collect, make_plugin_manager
    from advisor.report.tables import fact_table

    reg = collect(make_plugin_manager())
    f = detect(reg.fact_detectors)
    for w in f.warnings:
        warn(w)
    if json_:
        out(f.model_dump_json(indent=2, exclude_none=True) + "\n")
        return
    console(soft_wrap=True).print(rich_table(fact_table(f)))


@boundary
def schema() -> None:
    """Print the JSON schema of the profile."""
    from advisor.schema import profile_json_schema

    out(profile_json_schema())
