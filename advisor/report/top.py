"""The top of ``advisor report``'s HTML page: the answer, on the first screen (1400x900).

It holds the machine (class fingerprint, host, CPU, date of the profile), the "what to set"
table (each setting ``advisor emit --format env`` writes, with the default it replaces, the
gain ``advisor verify`` measured with its CI or "not verified", the confidence and the probe),
the one command that deploys it, what that command leaves out and why, and one headline
verdict per probe linking to its section (``#probe-NAME``).

What is written and what is left out is the emit's own selection
(``advisor.emit.decide.select``, read through ``advisor.specs.selection.Selection``): nothing
is decided again here.  Every text from the profile is HTML-escaped.

Public API: :func:`top_html`, :func:`page_title`, :data:`DEPLOY_FORMAT`, :data:`CSS`.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Optional

from advisor.errors import EmitError
from advisor.report.collect import profile_date
from advisor.report.markup import escape as _e
from advisor.report.markup import shown, table
from advisor.report.tables import load_note

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import PluginResult, Profile, Verification
    from advisor.plugins import Registry
    from advisor.specs.selection import Selection

__all__ = ["CSS", "DEPLOY_FORMAT", "page_title", "top_html"]

#: The format the deploy command writes: a shell file a site sources (profile.d, job scripts).
DEPLOY_FORMAT = "env"

CSS = """
.top{border:1px solid #c8d6e5;background:#f7fafd;padding:.3em 1em .6em;margin:.8em 0}
.top h2{margin-top:.6em;border:none;font-size:1.1em}
.machine{margin:.2em 0;font-size:.95em}
.top td code{overflow-wrap:normal}
.top table{font-size:.8em}
code.set-name,.top .nw{white-space:nowrap}
pre.deploy{background:#1f2933;color:#f5f7fa;padding:.5em .8em;margin:.3em 0;
white-space:pre-wrap;font-size:1em}
pre.deploy code{color:inherit}
.leftout{margin:.2em 0;padding-left:1.2em;font-size:.88em}
.verdicts{margin:.2em 0;padding-left:1.2em}
.verdicts li{margin:.1em 0}
"""

#: How the left-out list heads each cause of ``advisor.specs.selection.LeftOut``.
_CAUSE_HEAD = {
    "scope": "excluded by a configuration scope",
    "version": "not read by the recorded library version",
    "verdict": "refuted by advisor verify on this machine class",
    "kind": "no environment form",
    "library": "a library this format does not write",
    "default": "measured right at the library default",
}


def page_title(prof: "Profile") -> str:
    """``hpc-advisor report: <machine class> (<host>), <date of the profile>``."""
    host = prof.provenance.hostname or prof.facts.hostname or "?"
    return f"hpc-advisor report: {prof.facts.class_fingerprint()} ({host}), {profile_date(prof)}"


def _machine(prof: "Profile") -> str:
    f = prof.facts
    cpu = " ".join(x for x in (f.cpu.vendor, f.cpu.model_name) if x) or "unknown CPU"
    extra = ", ".join(x for x in (f.cpu.microarch, f"{f.cpu.cores_physical} cores"
                                  if f.cpu.cores_physical else None) if x)
    return (f"<p class=\"machine\"><b>Machine</b> class <code>{_e(f.class_fingerprint())}"
            f"</code>, host <code>{_e(prof.provenance.hostname or f.hostname or '?')}</code>, "
            f"{_e(cpu)}" + (f" ({_e(extra)})" if extra else "")
            + f"; profile of {_e(_when(prof.provenance.created))}"
            + f"{_e(load_note(prof.provenance))}.</p>")


def _when(created: Optional[str]) -> str:
    """``2026-12-01T08:06:03+00:00`` as ``2026-12-01 08:06 UTC`` (other text as it is)."""
    if not created:
        return "an unrecorded date"
    if len(created) >= 16 and created[10] == "T" and created.endswith(("+00:00", "Z")):
        return f"{created[:10]} {created[11:16]} UTC"
    return created


def _latest(prof: "Profile") -> dict[str, "Verification"]:
    """``probe:id`` -> the latest verdict of it alone (``Verification.time`` order)."""
    latest: dict[str, "Verification"] = {}
    for v in prof.verifications:
        old = latest.get(v.recommendation)
        if old is None or (v.time or "") >= (old.time or ""):
            latest[v.recommendation] = v
    return latest


def _gain(v: Optional["Verification"], here: str) -> str:
    """The measured gain cell: ratio advised/default (> 1 better) with its CI, or why none."""
    if v is None:
        return "<span class=\"note\">not verified</span>"
    where = "" if v.class_fingerprint in (None, here) else " <span class=\"note\">(on " \
        f"class {_e(v.class_fingerprint)})</span>"
    if v.ratio is None:
        return f"<span class=\"note\">{_e(v.verdict.replace('-', ' '))}</span>{where}"
    ci = (f" <span class=\"note\">[{v.ci_low:.2f}, {v.ci_high:.2f}]</span>"
          if v.ci_low is not None and v.ci_high is not None else "")
    return (f"<span class=\"nw\">&times;{v.ratio:.2f}{ci}</span><br>"
            f"<span class=\"note\">{_e(v.verdict)} by advisor verify</span>{where}")


def _confidence(prof: "Profile") -> dict[tuple[str, str], str]:
    return {(r.probe, rec.id): rec.confidence for r in prof.results for rec in r.recommendations}


def _wbr(text: str) -> str:
    """``text`` escaped, breakable only after its dots and equals signs (long item names)."""
    return _e(text).replace(".", ".<wbr>").replace("=", "=<wbr>")


def _default(s) -> str:
    """The default an item setting (``GLIBC_TUNABLES`` item ``key=value``) replaces, without
    the key its value repeats; other settings' defaults as :func:`shown` writes them."""
    value, default = str(s.value), s.default
    if s.separator and isinstance(default, str) and "=" in value and "=" in default:
        key, _, rest = default.partition("=")
        if value.partition("=")[0] == key:
            return rest
    return shown(s, default)


def _what_to_set(sel: "Selection", kinds: tuple[str, ...]) -> str:
    prof = sel.profile
    latest, conf, here = _latest(prof), _confidence(prof), prof.facts.class_fingerprint()
    rows = [(f"<code class=\"set-name\">{_e(c.setting.name)}</code>",
             f"<code>{_wbr(shown(c.setting, c.setting.value))}</code>",
             _wbr(_default(c.setting)),
             _gain(latest.get(f"{c.probe}:{c.recommendation}"), here),
             _e(conf.get((c.probe, c.recommendation), "?")),
             f"<a href=\"#probe-{_e(c.probe)}\">{_e(c.probe)}</a>")
            for c in sel.sources(kinds)]
    if not rows:
        return "<p>Nothing to set: every measured setting is left out (below).</p>"
    return table(("setting", "value", "default it replaces",
                  "gain (advised / default, 95 % CI)", "confidence", "probe"), rows)


def _deploy(source: Optional[str]) -> str:
    prof_arg = f" --profile {shlex.quote(source)}" if source else ""
    cmd = f"advisor emit --format {DEPLOY_FORMAT}{prof_arg} > site.sh"
    return ("<p><b>Deploy</b> (a shell file to source in job scripts or /etc/profile.d; "
            "<code>--format lmod</code> writes a module):</p>"
            f"<pre class=\"deploy\"><code id=\"deploy\">{_e(cmd)}</code></pre>")


def _left_out(sel: "Selection", kinds: tuple[str, ...]) -> str:
    """The deploy command's left-out settings, one line per cause and reason."""
    groups: dict[tuple[str, str], list[str]] = {}
    for lo in sel.left_out(kinds, fmt=DEPLOY_FORMAT):
        names = groups.setdefault((lo.cause, lo.why), [])
        if lo.setting.name not in names:
            names.append(lo.setting.name)
    if not groups:
        return "<p class=\"note\">Nothing is left out.</p>"
    items = [f"<li><b>{_e(_CAUSE_HEAD.get(cause, cause))}</b>: "
             + ", ".join(f"<code>{_e(n)}</code>" for n in names)
             + f" <span class=\"note\">({_e(why)})</span></li>"
             for (cause, why), names in groups.items()]
    return f"<p><b>Left out</b>, and why:</p><ul class=\"leftout\">{''.join(items)}</ul>"


def _verdict(r: "PluginResult", written: set[tuple[str, str]]) -> str:
    """One line: the probe's status and what it concluded."""
    from advisor.specs.units import sizes_in_text

    link = f"<a href=\"#probe-{_e(r.probe)}\">{_e(r.probe)}</a>"
    if r.status != "ok":
        word = r.status.replace("-", " ") + ":"
        reason = (r.reason or "")[len(word):].lstrip() if (r.reason or "").startswith(word) \
            else r.reason
        return (f"<li>{link}: <span class=\"status-{_e(r.status)}\">{_e(r.status)}</span>"
                + (f" &ndash; {_e(reason)}" if reason else "") + "</li>")
    sets = [rec for rec in r.recommendations if (r.probe, rec.id) in written]
    if sets:
        what = "; ".join(sizes_in_text(rec.title) for rec in sets)
        head = f"set {len(sets)}"
    elif r.recommendations:
        what, head = sizes_in_text(r.recommendations[0].title), "nothing to set"
    else:
        what, head = "no recommendation", "nothing to set"
    return f"<li>{link}: <b>{_e(head)}</b> &ndash; {_e(what)}</li>"


def top_html(prof: "Profile", registry: "Registry", source: Optional[str] = None) -> str:
    """The top block of the report (an HTML fragment: ``<section id="top">``).

    :param registry: the plugin registry (``advisor.plugins.Registry``), whose knobs and
        library records the emit's selection reads.
    :param source: what the deploy command passes as ``--profile`` (a path or ``@NAME``);
        None: omitted (this host's profile).
    """
    from advisor.emit.decide import select
    from advisor.specs.selection import EmitOptions

    kinds = tuple(getattr(registry.emitters.get(DEPLOY_FORMAT), "kinds", None) or ("env",))
    parts = [_machine(prof), "<h2 id=\"what-to-set\">What to set</h2>"]
    try:
        sel = select(prof, registry, EmitOptions(refuse_undeclared=True), DEPLOY_FORMAT)
    except EmitError as exc:
        parts.append(f"<p class=\"sev-error\">advisor emit refuses this profile: {_e(exc)}</p>")
        written: set[tuple[str, str]] = set()
    else:
        parts += [_what_to_set(sel, kinds), _deploy(source), _left_out(sel, kinds)]
        written = {(c.probe, c.recommendation) for c in sel.sources(kinds)}
    parts.append("<h2 id=\"verdicts\">Verdict per probe</h2><ul class=\"verdicts\">"
                 + "".join(_verdict(r, written) for r in prof.results) + "</ul>")
    return "<section class=\"top\" id=\"top\">" + "\n".join(parts) + "</section>"
