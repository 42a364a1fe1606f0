"""The default (brief) view of ``advisor show``: pure rows and lines, no printing.

``advisor show`` prints this unless ``--details`` is given (then ``advisor.report.tables.
show_report``, everything stored).  The brief view answers "what do I set, and why" for one
screen: the shipped profiles fit in 60 lines at 120 columns.

* one row per setting (``name = value``, the default it replaces, confidence, probe), numbered
  by recommendation;
* one short why per recommendation (the rationale's first sentence, long per-size lists
  summarised as the worst point and counts, ``summarise_per_size``);
* verdicts one line each, an evidence summary one line per evidence (median ranges in
  ``advisor.specs.units``; value-only records named and counted), findings one line each.

Texts are whole sentences (``short_text``); the CLI wraps them at spaces and cuts them to
the lines it gives each (``advisor.cli.render.print_wrapped``), so an identifier is never cut
in the middle.  Evidence lines are built to ``width`` columns (``clip``: cut at a space, ending
in ``…``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from advisor.report.tables import Table, load_note, setting_value
from advisor.specs.units import format_bytes, format_value, sizes_in_text

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Evidence, Profile

__all__ = ["BriefShow", "brief_show", "clip", "first_sentence", "short_text",
           "summarise_per_size", "replaced", "evidence_line"]

#: One per-size comparison: ``[group: ][size[:] ]metric xRATIO [lo, hi] verdict``.
_ITEM = re.compile(
    r"(?:(?P<group>[\w@.=+/-]+): )?(?:(?P<size>\d+(?:\.\d+)? (?:B|KiB|MiB|GiB)):? )?"
    r"(?P<metric>[a-z]+) x(?P<ratio>\d+(?:\.\d+)?) \[[\d.]+, [\d.]+\] "
    r"(?P<verdict>better|worse|indistinguishable)")
#: Below this many comparisons a list is short enough to print as it is.
MIN_ITEMS = 4
#: A sentence ends at ``. `` (or ``! ``/``? ``) before a capital letter or an opening bracket.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
#: A value of a record that keeps its unit beside it: ``NAME.value``, ``.lower``, ``.upper``,
#: ``.unit`` (``advisor_host_buffer``'s reference bandwidths).
_KEYED = re.compile(r"^(?P<name>.+)\.(?P<part>value|lower|upper|unit)$")


@dataclass(frozen=True)
class BriefShow:
    """What ``advisor show`` prints by default, in order; every field is plain text.

    :ivar heading: host, fingerprint, date, advisor version, probe duration.
    :ivar probes: ``Probes: ...``: each probe's status, time when ok (and when its time budget
        stopped a sequential measurement), a short reason else.
    :ivar settings: columns ``#`` (the recommendation's number on its first row), ``setting =
        value`` (a ``bytes`` value with its size, ``1073741824 (1 GiB)``), ``replaces``
        (``replaced``), ``confidence``, ``probe``; a recommendation without settings has one
        row with its title.
    :ivar whys: ``"<#> <recommendation id>: <short why>"``, one per recommendation.
    :ivar verifications: ``"<verdict> <ratio> [CI] <probe:recommendation> (<reason>)"`` lines.
    :ivar evidence: one line per evidence (``evidence_line``), then one line naming the
        value-only records.
    :ivar findings: ``("[severity] probe: message", lines)``, warnings first
        (``SEVERITY_ORDER``): the lines it may take, one; two for a finding whose per-size
        list was summarised.
    """

    heading: str
    probes: str
    settings: Table
    whys: list[str] = field(default_factory=list)
    verifications: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    findings: list[tuple[str, int]] = field(default_factory=list)


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut at the last space that fits (never inside
    a word, so never inside a setting name) and ended with ``…``; a single word longer than
    ``width`` is kept whole."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text.rfind(" ", 0, width - 1)
    if cut <= 0:
        return text.split(" ", 1)[0] + " …"
    return text[:cut].rstrip(" ,;:") + " …"


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to ``. `` before a capital letter or bracket)."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def summarise_per_size(text: str) -> str:
    """``text`` with a per-size list of at least ``MIN_ITEMS`` comparisons (``4 KiB bandwidth
    x1.33 [1.30, 1.36] better; ...``) replaced by, per variant, its worst comparison and the
    counts: ``ucx: worst 128 KiB latency x0.59, 5 better, 4 worse of 30``; the text after the
    list is dropped.  Text with a shorter list comes back unchanged."""
    items = list(_ITEM.finditer(text))
    if len(items) < MIN_ITEMS:
        return text
    groups: dict[str, list[tuple[float, str, str]]] = {}
    group, size = "", ""
    for m in items:
        group = m["group"] or group
        size = m["size"] or size
        label = f"{size} {m['metric']}".strip()
        groups.setdefault(group, []).append((float(m["ratio"]), label, m["verdict"]))
    parts = []
    for name, rows in groups.items():
        ratio, label, _ = min(rows)
        counts = ", ".join(f"{verdict} at {n}/{len(rows)}" for verdict, n in (
            ("better", sum(v == "better" for _r, _l, v in rows)),
            ("worse", sum(v == "worse" for _r, _l, v in rows))) if n)
        lead = f"{name} " if name else ""
        parts.append(f"{lead}{counts or 'indistinguishable'}, worst x{ratio:.2f} ({label})")
    # asides (what is compared with what, what a ratio means) go: the counts say it
    prefix = re.sub(r" \([^()]*\)", "", text[:items[0].start()]).rstrip(" :;,")
    return f"{prefix}: " + "; ".join(parts)


def replaced(setting) -> str:
    """What a setting replaces, short: ``= default`` when it is the default, a size in
    ``KiB``/``MiB`` for a ``bytes`` setting, only the value for a ``key=value`` entry of the same
    key (``glibc.cpu.x86_non_temporal_threshold=0xb580000`` beside that key's new value reads
    ``0xb580000``), else the default as stored; ``""`` when unknown."""
    if setting.is_default:
        return "= default"
    old = setting.default
    if old is None:
        return ""
    if setting.type == "bytes" and isinstance(old, int) and not isinstance(old, bool):
        return format_bytes(old)
    key, eq, rest = str(old).partition("=")
    if eq and str(setting.value).startswith(key + "="):
        return rest
    return str(old)


def _reason(reason: str) -> str:
    """A probe's reason for its status, short: its first clause, without a leading ``not
    applicable:`` (the status says it)."""
    reason = re.sub(r"^not applicable[:;,]\s*", "", reason.strip(), flags=re.I)
    return clip(re.split(r"[:;(]", reason)[0].strip(), 40)


#: An aside that explains how to read figures (``(ratio > 1: ...; 95 % CI; ...)``).
_ASIDE = re.compile(r" \((?=[^()]{30,}\))[^()]*; [^()]*\)")
#: Findings in this order in the brief view (then any other severity).
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}  # models.Severity
#: A why shorter than this takes the next sentence too.
SHORT_WHY = 80


def short_text(text: str) -> str:
    """The brief form of a rationale or finding: sizes human-readable, asides dropped, the
    first sentence (and the next ones while it is under ``SHORT_WHY`` characters), a long
    per-size list summarised (``summarise_per_size``)."""
    rest = _ASIDE.sub("", sizes_in_text(text)).strip()
    out = ""
    while rest and len(out) < SHORT_WHY:
        sentence = first_sentence(rest)
        out = f"{out} {sentence}".strip()
        rest = rest[len(sentence):].strip()
    return summarise_per_size(out)


def _keyed_values(values: dict) -> tuple[list[str], dict]:
    """``NAME.value/.lower/.upper/.unit`` groups as ``NAME value [lower, upper]`` texts (a
    trailing ``_<bytes>`` in NAME read as a size), and the values left over."""
    groups: dict[str, dict] = {}
    rest = {}
    for key, value in values.items():
        m = _KEYED.match(key)
        if m:
            groups.setdefault(m["name"], {})[m["part"]] = value
        else:
            rest[key] = value
    texts = []
    for name, parts in groups.items():
        unit = str(parts.get("unit", ""))
        if not unit or not isinstance(parts.get("value"), (int, float)):
            rest.update({f"{name}.{k}": v for k, v in parts.items()})
            continue
        base, _, tail = name.rpartition("_")
        label = f"{base} {format_bytes(int(tail))}" if tail.isdigit() and base else name
        text = f"{label} {format_value(parts['value'], unit)}"
        if isinstance(parts.get("lower"), (int, float)) and isinstance(parts.get("upper"),
                                                                        (int, float)):
            text += (f" [{format_value(parts['lower'], unit)}, "
                     f"{format_value(parts['upper'], unit)}]")
        texts.append(text)
    return texts, rest


def evidence_line(probe: str, ev: "Evidence", width: int) -> str:
    """One line for an evidence: ``probe evidence-id: series median range, ...`` over the
    x range, artefact points left out and counted; for value-only evidence whose values carry
    their unit (``NAME.value`` + ``NAME.unit``), those values.  ``""`` for other value-only
    evidence (``brief_show`` names those on one line)."""
    from advisor.report.evidence import artefact_summary
    from advisor.specs.figures import point_median

    head = f"{probe} {ev.id}: "
    if not ev.series:
        texts, _rest = _keyed_values(ev.values)
        return clip(head + "; ".join(texts), width) if texts else ""
    parts, xs, bad = [], [], 0
    for s in ev.series:
        meds = [m for m in (point_median(p) for p in s.points if not p.artefact) if m is not None]
        bad += sum(1 for p in s.points if p.artefact)
        xs += [(p.x, s.x_unit) for p in s.points if p.x is not None and s.x_unit]
        if meds:
            lo, hi = format_value(min(meds), s.unit), format_value(max(meds), s.unit)
            parts.append(f"{s.name} {lo}" if lo == hi else f"{s.name} {lo} – {hi}")
        else:
            parts.append(f"{s.name} (artefacts only)")
    where = ""
    if xs:
        lo, hi = min(xs)[0], max(xs)[0]
        unit = xs[0][1]
        a, b = format_value(lo, unit), format_value(hi, unit)
        where = f" at {a}" if a == b else f" at {a} – {b}"
    tail = where
    if bad:
        kinds = artefact_summary([p for s in ev.series for p in s.points])
        kinds = sorted({k.split("(")[-1].rstrip(")") for k in kinds.split(": ", 1)[1]
                        .split("; ")})
        tail += f"; {bad} artefact(s) left out ({', '.join(kinds)})"
    body = ""
    for i, part in enumerate(parts):
        more = len(parts) - i - 1
        cand = body + ("; " if body else "") + part
        if len(head + cand + tail) + (len(f" (+{more} more)") if more else 0) > width and body:
            body += f" (+{len(parts) - i} more)"
            break
        body = cand
    return clip(head + body + tail, width)


def _budget_stopped(result) -> bool:
    """Whether the time budget (or the run's aim) ended one of ``result``'s sequential
    measurements: an evidence value ``stopped`` of "budget", the probes' shared word for it
    (issue 25: the profile records why measuring stopped)."""
    return any(e.values.get("stopped") == "budget" for e in result.evidence)


def brief_show(prof: "Profile", width: int = 120, source: Optional[str] = None) -> BriefShow:
    """The brief rows of ``advisor show`` for ``prof``; ``width`` (columns) bounds the
    evidence lines, the CLI cuts the others to the lines it gives each.  ``source``: the
    profile as ``--profile`` named it (a path or ``@NAME``), named in the heading (shipped
    profiles of one host would read alike without it)."""
    from advisor.report.verify import class_cells

    p = prof.provenance
    named = f"profile {source} of" if source else "profile of"
    heading = (f"{named} {p.hostname or '?'} (fingerprint {prof.fingerprint}), {p.created}, "
               f"advisor {p.advisor_version}, {p.duration_s:.0f} s" + load_note(p))
    ok = [f"{r.probe} {r.status} ({r.duration_s:.1f} s" + (
        "; measuring stopped by time, see --details" if _budget_stopped(r) else "") + ")"
          for r in prof.results if r.status == "ok"]
    other = [f"{r.probe} {r.status}" + (f" ({_reason(r.reason)})" if r.reason else "")
             for r in prof.results if r.status != "ok"]
    probes = "Probes: " + ", ".join(ok + other)
    settings = Table("Recommendations (# = why below)",
                     ("#", "setting = value", "replaces", "confidence", "probe"))
    whys = []
    number = 0
    for r in prof.results:
        for rec in r.recommendations:
            number += 1
            for i, s in enumerate(rec.settings):
                settings.rows.append((str(number) if i == 0 else "",
                                      f"{s.name} = {setting_value(s.value, s.type)}",
                                      replaced(s), rec.confidence, r.probe))
            if not rec.settings:
                settings.rows.append((str(number), clip(sizes_in_text(rec.title), 60), "",
                                      rec.confidence, r.probe))
            whys.append(f"{number} {rec.id}: {short_text(rec.rationale or rec.title)}")
    verifications = []
    for v, where in zip(prof.verifications, class_cells(prof)):
        ratio = f" x{v.ratio:.2f}" if v.ratio is not None else ""
        ci = (f" [{v.ci_low:.2f}, {v.ci_high:.2f}]"
              if v.ci_low is not None and v.ci_high is not None else "")
        why = f" ({v.reason})" if v.reason else ""
        verifications.append(f"{v.verdict}{ratio}{ci} {v.recommendation}{why}")
    evidence, names = [], []
    for r in prof.results:
        for ev in r.evidence:
            line = evidence_line(r.probe, ev, width - 2)
            if line:
                evidence.append(line)
            else:
                names.append(ev.id)
    if names:
        evidence.append("values recorded (--details): " + ", ".join(names))
    findings = []
    # warnings first (what needs acting on), each severity in probe order
    ranked = sorted(((r, f) for r in prof.results for f in r.findings),
                    key=lambda rf: SEVERITY_ORDER.get(rf[1].severity, len(SEVERITY_ORDER)))
    for r, f in ranked:
        text = f"[{f.severity}] {r.probe}: {short_text(f.message)}"
        summarised = sum(1 for _m in _ITEM.finditer(sizes_in_text(f.message))) >= MIN_ITEMS
        findings.append((text, 2 if summarised else 1))
    return BriefShow(heading, probes, settings, whys, verifications, evidence, findings)
