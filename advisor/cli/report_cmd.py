"""``advisor report``: the profile's measurements drawn, as one self-contained HTML file or as
one PNG/SVG file per figure."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from advisor.cli import common, complete, outpath
from advisor.cli.boundary import boundary, err, out, warn
from advisor.errors import BadInputError

#: What to install when matplotlib is missing (pyproject's optional extra).
EXTRA_HINT = "pip install 'hpc-advisor[report]'"
FORMATS = ("html", "png", "svg")


def _need_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise BadInputError(f"advisor report needs matplotlib, the 'report' extra: "
                            f"{EXTRA_HINT}") from None


def _write_bytes(path: Path, data: bytes) -> None:
    """``data`` to ``path`` atomically (a temporary file beside it, then renamed)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise BadInputError(f"{path}: cannot write ({exc.strerror or exc})") from None


@boundary
def report(
    profile: Optional[Path] = common.ProfileOpt,
    fleet: Optional[Path] = typer.Option(None, "--fleet", metavar="DIR", help="Also draw the "
                                         "per-node distribution of each headline figure of "
                                         "this fleet directory (advisor fleet probe --out)."),
    format: str = typer.Option("html", "--format", "-f", metavar="FORMAT", help="html (one "
                               "file), png or svg (one file per figure in the -o directory).",
                               autocompletion=complete.choices(FORMATS)),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="PATH",
                                          help="The HTML file ('-' or none: stdout, "
                                          "refused on a terminal); for png and svg a "
                                          "directory (created), required."),
    mkdir: bool = outpath.MkdirOpt,
) -> None:
    """Draw the measurements: an HTML report (facts, each probe's figures, verify, findings,
    fleet) or the figures as PNG/SVG files, whose paths are printed one per line."""
    if format not in FORMATS:
        raise BadInputError(f"--format {format!r}: expected one of {', '.join(FORMATS)}")
    if format != "html" and (output is None or str(output) == "-"):
        raise BadInputError(f"--format {format}: -o DIR is required (one file per figure)")
    dash = output is not None and str(output) == "-"
    if dash:
        output = None
    elif output is None and sys.stdout.isatty():  # 700 KB of HTML is no terminal's business
        raise BadInputError("advisor report writes HTML: give -o FILE.html (or pipe it; "
                            "'-o -' forces stdout)")
    if output is not None:  # for png/svg the directory itself is created, not its parents
        outpath.check_output(output, mkdir=mkdir)
    _need_matplotlib()
    from advisor.plugins import load
    from advisor.report.collect import Figures, collect_figures
    from advisor.report.fleet import class_of_profile, fleet_view

    if fleet is not None and not fleet.is_dir():
        raise BadInputError(f"--fleet {fleet}: not a directory of node profiles")
    prof = None
    if profile is not None or fleet is None:
        from advisor.measure.artefacts import relabel_profile

        prof = relabel_profile(common.load(profile))  # labels from the record, see show
        if output is not None and output.exists() and format == "html":
            try:
                same = os.path.samefile(output, common.profile_path(profile))
            except OSError:
                same = False
            if same:
                raise BadInputError(f"{output}: is the profile being read; -o must name "
                                    "another file")
    reg = load()
    # a broken plugin matters here only when the profile holds its results
    measured = {r.plugin for r in prof.results} if prof is not None else set()
    for issue in reg.issues:
        if issue.plugin in measured:
            warn(f"plugin {issue.plugin} ({issue.stage}): {issue.error}; its figures are "
                 "left out")
    figs = (collect_figures(prof, reg.probes, str(profile) if profile is not None else None)
            if prof is not None else Figures())
    view = None
    if fleet is not None:  # the bands as 'advisor fleet report' draws them: [fleet] k, mad_floor
        cfg = common.load_config().model.fleet
        view = fleet_view(fleet, reg.probes, k=cfg.k, mad_floor=cfg.mad_floor)
    elif prof is not None and profile is not None:
        found = class_of_profile(profile, prof)
        if found is not None:  # the band as the class profile stores it (fleet report's rule)
            stored = prof.fleet
            view = fleet_view(found[0], reg.probes, only_class=found[1],
                              k=stored.k if stored is not None else None,
                              mad_floor=stored.mad_floor if stored is not None else None)
    warnings = figs.warnings + (view.warnings if view is not None else [])
    if format == "html":
        from advisor.report.html import report_html

        text = report_html(prof, figs, view, registry=reg,
                           source=str(profile) if profile is not None else None)
        if output is None:
            out(text)
        else:
            from advisor.save import atomic_write_text, check_writable

            check_writable(output)
            atomic_write_text(output, text)
            err(f"report written to {output}")
        for w in warnings:
            warn(w)
        return
    _files(figs, view, format, output, warnings)


def _files(figs, view, fmt: str, directory: Path, warnings: list[str]) -> None:
    """One file per figure, ``<probe>-<id>.<fmt>`` in ``directory``; paths on stdout."""
    from advisor.report.draw import render
    from advisor.report.fleet import FLEET_PROBE, fleet_footer

    if directory.exists() and not directory.is_dir():
        raise BadInputError(f"-o {directory}: not a directory (png and svg write one file per "
                            "figure)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInputError(f"-o {directory}: cannot create ({exc.strerror or exc})") from None
    items = figs.items() + [(FLEET_PROBE, s) for s in (view.figures if view else [])]
    for w in warnings:
        warn(w)
    written = 0
    for probe, spec in items:
        try:
            footer = fleet_footer(view) if probe == FLEET_PROBE and view else figs.footer
            data = render(spec, fmt, salt=f"{probe}-{spec.id}", footer=footer)
        except ImportError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's spec the drawing refuses
            warn(f"figure {spec.id} of {probe} left out: it could not be drawn "
                 f"({type(exc).__name__}: {exc})")
            continue
        path = directory / f"{probe}-{spec.id}.{fmt}"
        _write_bytes(path, data)
        out(f"{path}\n")
        written += 1
    if not written:
        warn("no figure to write: the profile's probes offer none (see the warnings above)")
