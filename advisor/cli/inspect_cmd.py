"""``advisor show``, ``plugins``, ``facts`` and ``schema``: render the rows of
``advisor.report.brief`` (``show``'s default) and ``advisor.report.tables`` (``show --details``
and the others), as rich tables or JSON with ``--json``; ``show --plot`` adds the probes' curve
figures drawn as text (``advisor.report.terminal``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from advisor.cli import common
from advisor.cli.boundary import boundary, out, warn
from advisor.cli.render import (console, print_compact, print_line, print_table, print_wrapped,
                                 rich_table)
from advisor.errors import BadInputError

#: What to install when plotext (or matplotlib, whose tick locators it uses) is missing.
PLOT_HINT = "pip install 'hpc-advisor[report]'"
PlotOpt = typer.Option(False, "--plot", help="Also draw the probes' curves (latency, bandwidth, "
                       "regret, copy sweep) as text, as wide as the terminal (80 columns when "
                       "unknown); needs the 'report' extra. Bar figures: advisor report.")


def _need_plotext() -> None:
    try:
        import matplotlib.ticker  # noqa: F401
        import plotext  # noqa: F401
    except ImportError:
        raise BadInputError(f"advisor show --plot needs plotext and matplotlib, the 'report' "
                            f"extra: {PLOT_HINT}") from None


def _plots(prof) -> None:
    """Print every curve figure of ``prof``'s probes (``collect_figures``), warnings to stderr."""
    import shutil

    from advisor.plugins import load
    from advisor.report.collect import collect_figures
    from advisor.report.terminal import DEFAULT_WIDTH, drawable, render

    reg = load()
    for issue in reg.issues:
        warn(f"plugin {issue.plugin} ({issue.stage}): {issue.error}; its figures are left out")
    figs = collect_figures(prof, reg.probes)
    for w in figs.warnings:
        warn(w)
    width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    for probe, spec in figs.items():
        if drawable(spec):
            out(f"\n{probe}: {spec.id}\n" + render(spec, width=width))


DetailsOpt = typer.Option(False, "--details", help="Print everything stored: every probe, "
                          "the full rationales with their per-size figures, each evidence "
                          "series and value, every remedy (the default is a one-screen brief).")


def _settings(con, table) -> None:
    """The brief settings table, one row per setting when it fits the console; else, per
    recommendation, a ``# probe, confidence`` line and its settings as wrapped lines, so a name
    or value is never cut."""
    if print_compact(con, table):
        return
    con.print(table.title, style="italic", markup=False, highlight=False)
    for number, setting, replaces, confidence, probe in table.rows:
        if number:
            print_wrapped(con, f"{number:>2} {probe}, {confidence} confidence:")
        was = {"": "", "= default": "  (the default)"}.get(replaces, f"  (replaces {replaces})")
        print_wrapped(con, f"{setting}{was}", indent="    ", hang="        ")


def _brief(con, prof, source: Optional[str] = None) -> None:
    """The default view (``advisor.report.brief``): what to set, one why each, verdicts,
    evidence and findings one line each."""
    from advisor.report.brief import brief_show
    from advisor.report.tables import show_report

    rep = brief_show(prof, width=con.width, source=source)
    print_wrapped(con, rep.heading)
    print_wrapped(con, rep.probes, max_lines=2)
    if rep.settings.rows:
        _settings(con, rep.settings)
    else:
        con.print("Recommendations: none", style="italic", markup=False, highlight=False)
    # (text, the lines it may take): a why two, a summarised per-size finding two, others one
    sections = (("Why", [(w, 2) for w in rep.whys]),
                ("Verifications (ratio = advised / baseline, > 1 is better)",
                 [(v, 1) for v in rep.verifications]),
                ("Evidence (median ranges)", [(e, 1) for e in rep.evidence]),
                ("Findings", rep.findings))
    for title, lines in sections:
        if lines:
            con.print(title, style="italic", markup=False, highlight=False)
        for line, most in lines:
            print_wrapped(con, line, indent="  ", hang="      ", max_lines=most)
    full = show_report(prof)
    if print_table(con, full.app_verifications):
        for line in full.app_details:
            print_line(con, line, soft_wrap=True)
    print_wrapped(con, "advisor show --details: full rationales, per-size figures, every "
                  "evidence series and value, remedies")


def _details(con, prof) -> None:
    """Everything ``show_report`` holds: tables and lines, nothing cut."""
    from advisor.report.tables import show_report

    rep = show_report(prof)
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
    if print_table(con, rep.app_verifications):
        for line in rep.app_details:
            print_line(con, line, soft_wrap=True)
    print_table(con, rep.evidence)
    # findings as lines, not table cells: remedies hold settings to copy, which a table would
    # break in the middle of a value
    if rep.findings:
        con.print("Findings", style="italic", markup=False, highlight=False)
    for line, remedy in rep.findings:
        print_line(con, line, soft_wrap=True)
        if remedy:
            print_line(con, f"    remedy: {remedy}", soft_wrap=True)


@boundary
def show(profile: Optional[Path] = common.ProfileOpt, json_: bool = common.JsonOpt,
         plot: bool = PlotOpt, details: bool = DetailsOpt) -> None:
    """Show a profile: what to set and why, verdicts, an evidence summary and the findings, in
    one screen; --details: everything stored (full rationales, every evidence series, the
    verifications of your own commands with verify --app, remedies)."""
    if plot:
        if json_:
            raise BadInputError("--plot draws text: it cannot be combined with --json")
        _need_plotext()
    from advisor.measure.artefacts import relabel_profile

    # artefact labels re-derived from the recorded conditions: a profile written before a rule
    # existed is shown with the label, never with the figure as a bandwidth
    prof = relabel_profile(common.load(profile))
    if json_:
        out(prof.model_dump_json(indent=2, exclude_none=True) + "\n")
        return
    con = console(soft_wrap=False)
    if details:
        _details(con, prof)
    else:
        _brief(con, prof, str(profile) if profile is not None else None)
    if plot:
        con.file.flush()
        _plots(prof)


@boundary
def plugins(json_: bool = common.JsonOpt,
            options: bool = typer.Option(False, "--options", help="List each probe's --option "
                                         "keys and what they set instead (--json: probe -> "
                                         "key -> help; null where a probe declares none).")
            ) -> None:
    """List plugins, what each contributes, and those that failed to load (with the error)."""
    from advisor.plugins import collect
    from advisor.report.tables import Table, plugin_rows, plugin_table

    cfg = common.load_config()  # [plugins] disable of every scope, ADVISOR_DISABLE_PLUGINS too
    pm = common.plugin_manager(cfg)
    reg = collect(pm)
    if options:  # the keys probes declare (advisor.probe.Probe.option_keys)
        keys = {name: getattr(p, "option_keys", None) for name, p in sorted(reg.probes.items())}
        if json_:
            import json

            out(json.dumps({n: None if k is None else dict(sorted(k.items()))
                            for n, k in keys.items()}, indent=2) + "\n")
            return
        table = [(n, key, str(text)) for n, k in keys.items()
                 for key, text in sorted((k or {}).items())]
        table += [(n, "(not declared)", "this probe does not say which keys it reads")
                  for n, k in keys.items() if k is None]
        console(soft_wrap=True).print(rich_table(Table(
            "--option keys of each probe (advisor probe --option KEY=VALUE)",
            ("probe", "key", "what it sets"), table)))
        return
    rows = plugin_rows(reg, disabled=set(cfg.model.plugins.disable), origins=pm.origins)
    if json_:
        import json

        out(json.dumps(rows, indent=2) + "\n")
        return
    console(soft_wrap=True).print(rich_table(plugin_table(rows)))


@boundary
def facts(json_: bool = common.JsonOpt) -> None:
    """Detect and print the machine facts (with --json: and their fingerprint,
    ``Facts.fingerprint``, the id a profile records)."""
    from advisor.facts import detect
    from advisor.plugins import collect, make_plugin_manager
    from advisor.report.tables import fact_table

    reg = collect(make_plugin_manager())
    f = detect(reg.fact_detectors)
    for w in f.warnings:
        warn(w)
    if json_:  # the facts, plus the fingerprint profiles and the fleet report compare
        import json

        data = {"fingerprint": f.fingerprint(), **f.model_dump(mode="json", exclude_none=True)}
        out(json.dumps(data, indent=2) + "\n")
        return
    console(soft_wrap=True).print(rich_table(fact_table(f)))


@boundary
def schema() -> None:
    """Print the JSON schema of the profile."""
    from advisor.schema import profile_json_schema

    out(profile_json_schema())
