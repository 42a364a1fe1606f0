"""The rows of ``advisor show``, ``advisor plugins`` and ``advisor facts``: pure data, no printing.

The CLI renders these (rich tables on a terminal, JSON with ``--json``); tests read them without
a terminal.  Every cell is plain text: the CLI escapes control characters and never reads a cell
as markup.

Public API:

* :class:`Table` - a title, column headers and rows of text cells;
* :func:`show_report` -> :class:`ShowReport` - everything ``advisor show`` prints for a profile;
* :func:`plugin_rows` -> one dict per plugin (the ``advisor plugins --json`` objects) and
  :func:`plugin_table` for the table;
* :func:`fact_table` - the dotted fact names and values of ``advisor facts``;
* :func:`fleet_tables` - the class and node tables of ``advisor fleet report``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional

if TYPE_CHECKING:  # pragma: no cover
    from advisor.fleet.report import FleetReport
    from advisor.models import Facts, Profile
    from advisor.plugins import Registry

__all__ = ["Table", "ShowReport", "show_report", "PLUGIN_HEADERS", "plugin_rows", "plugin_table",
           "fact_table", "fleet_tables", "setting_value"]


@dataclass(frozen=True)
class Table:
    """A table of text cells; ``rows`` may be empty (the CLI then prints nothing or a note)."""

    title: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)


@dataclass(frozen=True)
class ShowReport:
    """What ``advisor show`` prints, in order.

    :ivar heading: one line: host, fingerprint, date, advisor version, probe duration.
    :ivar probes: one row per probe result.
    :ivar recommendations: one row per setting of each recommendation (a row with empty setting
        cells for a recommendation without settings).
    :ivar rationales: ``probe: id: rationale`` lines (the per-size figures; too long for cells).

    Sizes are human-readable: a ``bytes`` setting's value keeps its stored form with the size
    after it (``1073741824 (1 GiB)``), ``<n> bytes`` / ``<n> B`` in titles, rationales and
    finding messages read ``1 GiB`` (``units.sizes_in_text``); remedies stay verbatim (they
    hold settings to copy).
    :ivar verifications: the stored verdicts (no rows: none stored), each with the machine
        class it was taken on (``advisor.report.verify.class_cells``: a verdict from another
        class vetoes nothing in emit).
    :ivar evidence: ``advisor.report.evidence.evidence_rows``.
    :ivar findings: ``([severity] probe: message, remedy or "")`` pairs, printed as lines: a
        remedy holds settings to copy, which a table cell would break inside a value.
    :ivar app_verifications: one row per ``verify --app`` record (``advisor.report.appverify``:
        command, metric, verdict with ratio, CI and A/A floor, rounds, time; no rows: none).
    :ivar app_details: lines under that table: a record's bisection (settings and what advised
        them) and attribution shares, only where present.
    """

    heading: str
    probes: Table
    recommendations: Table
    rationales: list[str]
    verifications: Table
    evidence: Table
    findings: list[tuple[str, str]]
    app_verifications: Table = field(default_factory=lambda: Table("", ()))
    app_details: list[str] = field(default_factory=list)


def _fixed(value, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"



def load_note(p: Any) -> str:
    """The heading's note on what the probe ran beside (``Provenance.busy_cores_before``,
    ``steal_share``), from the thresholds ``advisor probe`` warns at (``advisor.measure.load``):
    '' when neither was reached, else '; measured ...'.  The warning is printed once, while
    probing; this keeps it with the profile."""
    from advisor.measure.load import BUSY_CORES, NOISY_STEAL

    notes = []
    if p.busy_cores_before is not None and p.busy_cores_before >= BUSY_CORES:
        notes.append(f"beside other processes using {p.busy_cores_before:.1f} cores")
    if p.steal_share is not None and p.steal_share >= NOISY_STEAL:
        notes.append(f"with {p.steal_share:.0%} of the CPU time taken by the hypervisor (steal)")
    return ("; measured " + " and ".join(notes)) if notes else ""

def setting_value(value, type_: str) -> str:
    """A setting's value as stored (copyable), with the human-readable size after a ``bytes``
    value of 1 KiB or more: ``1073741824 (1 GiB)``."""
    from advisor.specs.units import format_bytes

    if (type_ == "bytes" and isinstance(value, int) and not isinstance(value, bool)
            and value >= 1024):
        return f"{value} ({format_bytes(value)})"
    return str(value)


def show_report(prof: "Profile") -> ShowReport:
    """The rows of ``advisor show`` for ``prof``."""
    from advisor.report.appverify import SHOW_HEADERS, SHOW_TITLE, detail_lines, table_rows
    from advisor.report.evidence import EVIDENCE_HEADERS, evidence_rows
    from advisor.specs.units import sizes_in_text
    from advisor.report.verify import class_cells

    p = prof.provenance
    heading = (f"profile of {p.hostname or '?'} (fingerprint {prof.fingerprint}), {p.created}, "
               f"advisor {p.advisor_version}, {p.duration_s:.0f} s" + load_note(p))
    probes = Table("Probes", ("probe", "status", "reason", "time (s)"),
                   [(r.probe, r.status, r.reason or "", f"{r.duration_s:.1f}")
                    for r in prof.results])
    recs = Table("Recommendations", ("probe", "setting", "value", "replaces", "confidence", "why"))
    rationales = []
    for r in prof.results:
        for rec in r.recommendations:
            for s in rec.settings:
                replaces = ("(is the default)" if s.is_default else
                            "" if s.default is None else setting_value(s.default, s.type))
                recs.rows.append((r.probe, s.name, setting_value(s.value, s.type), replaces,
                                  rec.confidence, sizes_in_text(rec.title)))
            if not rec.settings:
                recs.rows.append((r.probe, "", "", "", rec.confidence, sizes_in_text(rec.title)))
            rationales.append(f"{r.probe}: {rec.id}: {sizes_in_text(rec.rationale)}")
    verifications = Table(
        "Verifications (ratio = advised / baseline, > 1 is better)",
        ("recommendation", "verdict", "ratio", "95 % CI", "noise floor", "why", "when",
         "machine class"))
    for v, where in zip(prof.verifications, class_cells(prof)):
        ci = (f"[{v.ci_low:.3f}, {v.ci_high:.3f}]"
              if v.ci_low is not None and v.ci_high is not None else "")
        verifications.rows.append((v.recommendation, v.verdict, _fixed(v.ratio), ci,
                                   _fixed(v.noise_floor), v.reason or "", v.time or "", where))
    evidence = Table("Evidence (artefact points are not bandwidths: left out of the ranges and "
                     "marked)", tuple(EVIDENCE_HEADERS),
                     [tuple(str(c) for c in row) for row in evidence_rows(prof)])
    findings = [(f"[{f.severity}] {r.probe}: {sizes_in_text(f.message)}", f.remedy or "")
                for r in prof.results for f in r.findings]
    apps = Table(SHOW_TITLE, SHOW_HEADERS,
                 table_rows(prof.app_verifications))
    return ShowReport(heading, probes, recs, rationales, verifications, evidence, findings,
                      apps, detail_lines(prof.app_verifications))


#: The columns of ``advisor plugins`` (the table; ``--json`` gives ``plugin_rows``).
PLUGIN_HEADERS = ("plugin", "status", "probes", "emitters", "knobs", "fact detectors", "origin",
                  "error")


def plugin_rows(reg: "Registry", *, disabled: Iterable[str] = (),
                origins: Optional[Mapping[str, str]] = None) -> list[dict[str, Any]]:
    """One dict per plugin, by name: ``name``, ``origin`` (distribution and version, or module),
    ``status`` ("ok", "error": an issue was recorded, "disabled": ``ADVISOR_DISABLE_PLUGINS``),
    the sorted names of its ``probes``, ``emitters``, ``knobs`` (``library:NAME``),
    ``fact_detectors`` and ``libraries``, and its ``errors`` (``stage: error`` lines).

    :param disabled: plugin names disabled by the environment (listed even when not loaded).
    :param origins: plugin -> origin for plugins the registry does not know (blocked ones).
    """
    disabled = set(disabled)
    origins = origins or {}
    errors: dict[str, list[str]] = {}
    for issue in reg.issues:
        errors.setdefault(issue.plugin, []).append(f"{issue.stage}: {issue.error}")
    rows = []
    for name in sorted(set(reg.plugins) | disabled):
        mine = reg.of_plugin(name)

        def names(kind: str) -> list[str]:
            return sorted({e.name for e in mine if e.kind == kind})

        status = "disabled" if name in disabled else "error" if name in errors else "ok"
        rows.append({"name": name, "origin": reg.plugins.get(name) or origins.get(name, ""),
                     "status": status, "probes": names("probe"), "emitters": names("emitter"),
                     "knobs": names("knob"), "fact_detectors": names("fact_detector"),
                     "libraries": names("library"), "errors": errors.get(name, [])})
    return rows


def plugin_table(rows: list[dict[str, Any]]) -> Table:
    """``plugin_rows`` as table cells (knobs as a count: there are dozens)."""
    return Table("", PLUGIN_HEADERS, [
        (r["name"], r["status"], ", ".join(r["probes"]), ", ".join(r["emitters"]),
         str(len(r["knobs"])) if r["knobs"] else "", ", ".join(r["fact_detectors"]),
         r["origin"], "; ".join(r["errors"])) for r in rows])


def fact_table(facts: "Facts") -> Table:
    """Every known fact as a ``(dotted.name, value)`` row (lists of objects indexed, e.g.
    ``cuda[0].name``); unknown facts (None) and the detection warnings are left out."""
    rows: list[tuple[str, ...]] = []

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for i, v in enumerate(value):
                walk(f"{prefix}[{i}]", v)
        else:
            rows.append((prefix, str(value)))

    walk("", facts.model_dump(mode="json", exclude_none=True, exclude={"warnings"}))
    return Table(f"facts (fingerprint {facts.fingerprint()})", ("fact", "value"), rows)


def fleet_tables(report: "FleetReport") -> list[Table]:
    """The tables of ``advisor fleet report`` for ``report``: the machine classes (class, nodes,
    hostlist, class profile or why it was not written), then the nodes whose state is not
    ``ok`` (node, state, class, why)."""
    from advisor.fleet.report import compress_hostlist

    classes = Table("machine classes", ("class", "nodes", "hostlist", "class profile"),
                    [(c.class_id, str(len(c.nodes)), compress_hostlist(c.nodes),
                      c.profile_path or f"not written: {c.error}") for c in report.classes])
    nodes = Table("nodes not ok", ("node", "state", "class", "why"),
                  [(n.name, n.state, n.class_id or "", n.reason or "")
                   for n in report.nodes if n.state != "ok"])
    return [classes, nodes]
