"""``advisor report``'s HTML: one self-contained file, readable offline and attachable to a
ticket.

Everything is inline: the figures as ``<svg>`` elements (``advisor.report.draw``), the CSS in
one ``<style>``; no script, no font, no image or link is fetched.  A Content-Security-Policy
meta (``default-src 'none'; style-src 'unsafe-inline'; img-src data:``) makes a browser block any
fetch the page might still try.  Every text from the profile (host names, plugin messages,
setting values) is HTML-escaped.

The top (``advisor.report.top``): the machine, what to set, the deploy command, what is left
out and why, one verdict per probe.  Then the sections: Facts (summary and machine class,
provenance), one per probe result (status, recommendations with the defaults they replace,
figures with captions), Verify (verdicts and their figure), Application verification (each
``verify --app`` record: verdict, the figure of its runs, CI and floor, both environments,
bisection, attribution), Findings and remedies, Fleet (when given), and the figures left out
with why.

Public API: :func:`report_html`, :data:`CSP`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from advisor.report.markup import escape as _e
from advisor.report.markup import shown as _shown
from advisor.report.markup import table as _table
from advisor.report.top import CSS as TOP_CSS
from advisor.specs.units import format_bytes, sizes_in_text

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile
    from advisor.plugins import Registry
    from advisor.report.collect import Figures
    from advisor.report.fleet import FleetView

__all__ = ["CSP", "report_html"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
body{font-family:"DejaVu Sans",system-ui,sans-serif;margin:0 auto;max-width:1000px;
padding:1em 1.5em;color:#222;background:#fff;line-height:1.4}
h1{font-size:1.5em;border-bottom:2px solid #1f77b4;padding-bottom:.2em}
h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ccc}
h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f4f8}
code{font-family:"DejaVu Sans Mono",monospace;font-size:.9em;overflow-wrap:anywhere}
figure{margin:1em 0;padding:.5em;border:1px solid #e3e3e3}
figure svg{width:100%;height:auto;display:block}
figcaption{font-size:.88em;color:#333;margin-top:.3em}
.status-ok{color:#1b7837;font-weight:bold}
.status-failed{color:#b2182b;font-weight:bold}
.status-not-applicable{color:#777;font-weight:bold}
.sev-error{color:#b2182b}.sev-warning{color:#b35806}.sev-info{color:#555}
.note{color:#555;font-size:.9em}
.rec{margin:.6em 0 1em;padding-left:.8em;border-left:3px solid #1f77b4}
.rec h4{margin:.2em 0;font-size:1em}
.rationale{font-size:.88em;color:#333;margin:.3em 0;overflow-wrap:anywhere}
table{max-width:100%}
.findings li{margin:.4em 0}
.remedy{margin:.2em 0 0 1em;font-size:.9em}
.verdict-better{color:#1b7837;font-weight:bold}
.verdict-regression,.verdict-breaks{color:#b2182b;font-weight:bold}
.verdict-no-difference,.verdict-inconclusive{color:#555;font-weight:bold}
"""


def _figure(probe: str, spec, warnings: list[str], footer: str = "") -> str:
    from advisor.report.draw import svg_text

    try:
        svg = svg_text(spec, salt=f"{probe}-{spec.id}", footer=footer)
    except ImportError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plugin's spec the drawing refuses
        warnings.append(f"figure {spec.id} of {probe} left out: it could not be drawn "
                        f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})")
        return ""
    sources = sorted({f"{s.evidence}" + (f" / {s.series}" if s.series else "")
                      for s in spec.series if s.evidence})
    src = (f" <span class=\"note\">Evidence: {_e('; '.join(sources))}.</span>"
           if sources else "")
    return (f"<figure id=\"fig-{_e(probe)}-{_e(spec.id)}\" data-probe=\"{_e(probe)}\" "
            f"data-figure=\"{_e(spec.id)}\">{svg}<figcaption><b>{_e(spec.title)}.</b> "
            f"{_e(sizes_in_text(spec.caption))}{src}</figcaption></figure>")


def _facts(prof: "Profile") -> str:
    f, p = prof.facts, prof.provenance
    mpi = " ".join(x for x in (f.mpi.implementation, f.mpi.version, f.mpi.device) if x)
    mem = f.memory
    rows = [
        ("host", f.hostname or p.hostname), ("fingerprint", prof.fingerprint),
        ("machine class", f.class_fingerprint()),
        ("CPU", f"{f.cpu.model_name or '?'} ({f.cpu.arch or '?'}, {f.cpu.microarch or '?'})"),
        ("cores", f"{f.cpu.cores_physical or '?'} physical, {f.cpu.cores_logical or '?'} logical"
         + (f", virtualised ({f.cpu.virtualization})" if f.cpu.virtualization not in (None, "none")
            else "")),
        ("caches", ", ".join(f"{n} {format_bytes(b)}" for n, b in
                             (("L2", f.cpu.cache_l2_bytes), ("L3", f.cpu.cache_l3_bytes)) if b)),
        ("memory", (format_bytes(mem.total_bytes) if mem.total_bytes else "?")
         + (f", {mem.numa_nodes} NUMA node(s)" if mem.numa_nodes else "")
         + (f", base page {format_bytes(mem.page_size_bytes)}" if mem.page_size_bytes else "")),
        ("THP", f"enabled: {mem.thp_enabled or '?'}, defrag: {mem.thp_defrag or '?'}"
         + (f", {format_bytes(mem.thp_pmd_size_bytes)} pages" if mem.thp_pmd_size_bytes else "")),
        ("kernel", f"{f.kernel.system or ''} {f.kernel.release or '?'}".strip()),
        ("glibc", f.kernel.glibc_version), ("MPI", mpi or None),
        ("provenance", f"advisor {p.advisor_version}, {p.created}, {p.duration_s:.0f} s: "
         f"{p.command}"),
    ]
    return ("<h2 id=\"facts\">Facts</h2>"
            + _table(("fact", "value"), [(_e(k), _e(v if v not in (None, "") else "unknown"))
                                         for k, v in rows]))


def _recommendation(rec) -> str:
    rows = [(f"<code>{_e(s.name)}</code>", f"<code>{_e(_shown(s, s.value))}</code>"
             + (" <span class=\"note\">(confirms the default)</span>" if s.is_default else ""),
             _e(_shown(s, s.default)), _e(s.library)) for s in rec.settings]
    table = (_table(("setting", "value", "default it replaces", "library"), rows) if rows
             else "<p class=\"note\">No setting: a finding or a confirmation.</p>")
    return (f"<div class=\"rec\"><h4>{_e(sizes_in_text(rec.title))} "
            f"<span class=\"note\">(confidence {_e(rec.confidence)}; evidence: "
            f"{_e(', '.join(rec.evidence) or 'none')})</span>"
            f"</h4>{table}<p class=\"rationale\">{_e(sizes_in_text(rec.rationale))}</p></div>")


def _result(r, figs: "Figures", warnings: list[str]) -> str:
    parts = [f"<h2 id=\"probe-{_e(r.probe)}\">{_e(r.probe)} "
             f"<span class=\"note\">(plugin {_e(r.plugin)})</span></h2>",
             f"<p>Status: <span class=\"status-{_e(r.status)}\">{_e(r.status)}</span>"
             + (f": {_e(r.reason)}" if r.reason else "")
             + f" <span class=\"note\">({r.duration_s:.1f} s)</span></p>"]
    specs = figs.by_probe.get(r.probe, [])
    if specs:
        parts.append("<h3>Figures</h3>")
        parts += [_figure(r.probe, s, warnings, figs.footer) for s in specs]
    if r.recommendations:
        parts.append("<h3>Recommendations</h3>")
        parts += [_recommendation(rec) for rec in r.recommendations]
    return "\n".join(parts)


def _verify(prof: "Profile", figs: "Figures", warnings: list[str]) -> str:
    from advisor.report.collect import VERIFY_PROBE

    if not prof.verifications:
        return ("<h2 id=\"verify\">Verify</h2><p class=\"note\">No verdicts stored: run "
                "<code>advisor verify</code> to re-measure the advice A/B.</p>")

    def f(x):
        return "" if x is None else f"{x:.3f}"

    from advisor.report.verify import class_cells

    rows = [(_e(v.recommendation), _e(v.verdict), f(v.ratio),
             f"[{f(v.ci_low)}, {f(v.ci_high)}]" if v.ci_low is not None else "",
             f"±{v.noise_floor:.1%}" if v.noise_floor is not None else "", _e(v.reason or ""),
             _e(where)) for v, where in zip(prof.verifications, class_cells(prof))]
    out = ["<h2 id=\"verify\">Verify</h2>",
           _table(("recommendation", "verdict", "ratio", "CI", "A/A floor", "reason",
                   "machine class"), rows)]
    out += [_figure(VERIFY_PROBE, s, warnings, figs.footer)
            for s in figs.by_probe.get(VERIFY_PROBE, [])]
    return "\n".join(out)


def _app_record(i: int, rec, figs: "Figures", warnings: list[str]) -> str:
    """One ``verify --app`` record: verdict, figure of its runs, the numbers, both
    environments, the bisection and the attribution."""
    from advisor.report.appfigure import APP_PROBE, figure_id, metric_label
    from advisor.report.appverify import command_text, run_counts

    def f(x):
        return "-" if x is None else f"{x:.3f}"

    fid = figure_id(rec, i)
    direction = "higher" if rec.higher_is_better else "lower"
    out = [f"<h3 id=\"app-{_e(fid)}\">#{i + 1}: <code>{_e(command_text(rec.command))}</code></h3>",
           f"<p><span class=\"verdict-{_e(rec.verdict)}\">{_e(rec.verdict.upper())}</span>: "
           f"{_e(_without_verdict(rec.reason or '', rec.verdict))}</p>"]
    out += [_figure(APP_PROBE, s, warnings, figs.footer) for s in figs.by_probe.get(APP_PROBE, [])
            if s.id == fid]
    rows = [("metric", f"{metric_label(rec)} ({direction} is better)"
             + (f", read from {rec.metric_file}" if rec.metric_file else "")
             + (f"; a run must match --check {rec.check!r}" if rec.check else "")),
            ("ratio (> 1: B better)", f(rec.ratio)),
            (f"{100 * rec.ci_level:.0f} % CI", f"[{f(rec.ci_low)}, {f(rec.ci_high)}]"
             if rec.ci_low is not None else "-"),
            ("A/A floor", f"±{rec.noise_floor:.1%}" if rec.noise_floor is not None else "-"),
            ("rounds", f"{rec.rounds} ({rec.stop})" if rec.stop else str(rec.rounds)),
            ("successful runs", run_counts(rec)),
            ("where, when", f"{rec.hostname or '?'} (fingerprint {rec.fingerprint or '?'}), "
             f"{rec.time}, in {rec.cwd or '?'}")]
    out.append(_table(("figure", "value"), [(_e(k), _e(v)) for k, v in rows]))
    a_name = "A: library defaults" if rec.against == "defaults" else "A: current environment"
    b_name = "B: advisor emit" if rec.environment == "profile" else f"B: {rec.environment}"
    env = [(f"<code>{_e(n)}</code>",
            "<span class=\"note\">unset</span>" if n in rec.unset or n not in rec.baseline
            else f"<code>{_e(rec.baseline[n])}</code>", f"<code>{_e(v)}</code>",
            _e("; ".join(rec.sources.get(n, []))))
           for n, v in sorted(rec.advised.items())]
    out.append(_table(("variable", a_name, b_name, "set by"), env))
    if rec.bisection is not None:
        b = rec.bisection
        out.append(f"<p><b>Bisection</b> ({b.tests} runs; "
                   + ("reproduced on a rerun" if b.reproduced else "NOT reproduced on a rerun")
                   + f"): the smallest set of B's settings that breaks the command fails with "
                   f"{_e(b.failure)}:</p><ul>" + "".join(
                       f"<li><code>{_e(n)}={_e(rec.advised.get(n, '?'))}</code> advised by "
                       f"{_e('; '.join(b.sources.get(n, [])) or '?')}</li>" for n in b.settings)
                   + "</ul>")
    if rec.attribution:
        what = {"gain": "carries gain", "loss": "carries loss", "none": "no measurable share",
                "unknown": "undecided"}
        out.append("<p><b>Attribution</b>: B against B without each group "
                   "(&gt; 1: the group helps), same A/A floor.</p>" + _table(
                       ("group", "settings", "share", "ratio", "CI", "rounds"),
                       [(_e(a.group), _e(", ".join(a.settings)),
                         _e(what[a.share] if a.ratio is not None else "not measured"),
                         f(a.ratio), f"[{f(a.ci_low)}, {f(a.ci_high)}]"
                         if a.ci_low is not None else "-", str(a.rounds))
                        for a in rec.attribution]))
    return "\n".join(out)


def _without_verdict(reason: str, verdict: str) -> str:
    """``reason`` without a leading repeat of the verdict (``inconclusive: the CI ...``)."""
    word = verdict.replace("-", " ")
    return reason[len(word) + 1:].lstrip() if reason.lower().startswith(word + ":") else reason


def _app(prof: "Profile", figs: "Figures", warnings: list[str]) -> str:
    head = "<h2 id=\"verify-app\">Application verification (verify --app)</h2>"
    if not prof.app_verifications:
        return (head + "<p class=\"note\">Not checked: no record stored. Run <code>advisor "
                "verify --app -- CMD ...</code> to A/B your own command under the emitted "
                "environment.</p>")
    return "\n".join([head] + [_app_record(i, rec, figs, warnings)
                               for i, rec in enumerate(prof.app_verifications)])


def _findings(prof: "Profile") -> str:
    items = [f"<li><span class=\"sev-{_e(f.severity)}\">[{_e(f.severity)}]</span> "
             f"<b>{_e(r.probe)}</b>: {_e(sizes_in_text(f.message))}"
             + (f"<div class=\"remedy\">Remedy: <code>{_e(f.remedy)}</code></div>"
                if f.remedy else "") + "</li>"
             for r in prof.results for f in r.findings]
    body = (f"<ul class=\"findings\">{''.join(items)}</ul>" if items
            else "<p class=\"note\">No findings.</p>")
    return "<h2 id=\"findings\">Findings and remedies</h2>" + body


def _fleet(view: "FleetView", warnings: list[str]) -> str:
    from advisor.report.fleet import FLEET_PROBE, fleet_footer

    out = [f"<h2 id=\"fleet\">Fleet</h2><p>Directory <code>{_e(view.directory)}</code>: "
           + _e(", ".join(f"{n} {s}" for s, n in view.counts.items())) + ".</p>"]
    if view.flagged:
        out.append("<h3>Flagged nodes</h3>" + _table(
            ("node", "state", "class", "why"),
            [(_e(n), _e(st), _e(c or ""), _e(why or "")) for n, st, c, why in view.flagged]))
        out.append(f"<p>Hostlist of the flagged nodes: <code>{_e(view.hostlist)}</code></p>")
    else:
        out.append("<p>No node is flagged.</p>")
    out += [_figure(FLEET_PROBE, s, warnings, fleet_footer(view)) for s in view.figures]
    return "\n".join(out)


def report_html(profile: Optional["Profile"], figures: "Figures",
                fleet: Optional["FleetView"] = None, *, title: Optional[str] = None,
                registry: Optional["Registry"] = None, source: Optional[str] = None) -> str:
    """The complete HTML document of the report (a ``str``; the CLI writes it).

    :param profile: the profile to report on; None for a fleet-only report.
    :param registry: the plugin registry the top's "what to set" selection reads
        (``advisor.report.top``); None: ``advisor.plugins.load()``.
    :param source: the profile as ``--profile`` names it (path or ``@NAME``), for the deploy
        command at the top; None: omitted (this host's profile).
    :param figures: ``advisor.report.collect.collect_figures``; its warnings are listed in the
        page, and a figure the drawing refuses is added to them (``figures.warnings``).
    :param fleet: ``advisor.report.fleet.fleet_view`` of a fleet report directory, or None.
    :raises ImportError: matplotlib is not installed (the ``report`` extra).
    """
    warnings = figures.warnings
    body: list[str] = []
    if profile is not None:
        from advisor.report.top import page_title, top_html

        if registry is None:
            from advisor.plugins import load

            registry = load()
        p = profile.provenance
        body += [f"<h1>{_e(title or page_title(profile))}</h1>",
                 top_html(profile, registry, source),
                 f"<p class=\"note\">Profile fingerprint {_e(profile.fingerprint)}, measured "
                 f"{_e(p.created)} by advisor {_e(p.advisor_version)}.</p>", _facts(profile)]
        body += [_result(r, figures, warnings) for r in profile.results]
        body += [_verify(profile, figures, warnings), _app(profile, figures, warnings),
                 _findings(profile)]
    else:
        body.append(f"<h1>{_e(title or 'hpc-advisor fleet report')}</h1>")
    if fleet is not None:
        body.append(_fleet(fleet, warnings))
    if warnings:
        body.append("<h2 id=\"left-out\">Figures left out</h2><ul>"
                    + "".join(f"<li>{_e(w)}</li>" for w in warnings) + "</ul>")
    heading_text = body[0][4:-5] if body else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{heading_text}</title><style>{CSS}{TOP_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")

