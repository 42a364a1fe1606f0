"""Shared, pure helpers of the output formats, built-in or a plugin's: merging, validating and
writing the settings of a :class:`advisor.specs.selection.Selection`.

Every built-in format goes through :func:`env_items` (environment formats) or
:func:`setting_records` (toml, json), so all formats agree on *which* settings are written, in
*which order*, with *which value string*:

- selection: ``Selection.sources(kinds)``: what ``advisor.emit.decide`` decided once for the
  emit (selected probes, library versions, verdicts), defaults only with ``--all``;
- value strings: ``bool`` -> ``"1"`` / ``"0"`` (MPICH reads boolean CVARs as integers, see the
  ``MPIR_CVAR_*`` descriptions printed by ``mpivars``; glibc tunables are integers too), ``int``
  -> plain decimal (MPICH CVARs of byte sizes want plain integer bytes: case ``cvar-typos``),
  ``float`` -> ``repr`` (shortest round-trip decimal), ``str`` unchanged;
- safety: environment variable names must match ``[A-Za-z_][A-Za-z0-9_]*`` (POSIX.1-2017 XBD
  8.1 portable names); values and separators holding a control character (Unicode category Cc,
  which includes NUL, TAB, CR, LF, ESC, DEL and C1) or a lone surrogate (Cs, not encodable as
  UTF-8) raise :class:`advisor.errors.EmitError` naming the setting, and so do the names that
  are never emitted (:mod:`advisor.specs.names`);
- ordering: by variable name (so two profiles with the same settings give the same bytes,
  whatever order their probes ran in);
- list variables (``Setting.separator`` set, e.g. ``GLIBC_TUNABLES`` with ``":"``): all items for
  one name are merged into one :class:`EnvItem` whose ``value`` is the items joined by the
  separator, duplicates dropped.  Formats *append* that value to an existing one (see
  :data:`MERGE_POLICY`).
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Sequence

from advisor.errors import EmitError
from advisor.specs.entry import NAME_RE
from advisor.specs.names import refused_reason
from advisor.specs.selection import Source

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile, Setting
    from advisor.specs.selection import Selection


#: How list variables are merged, in every format that can express it.
#:
#: The emitted file appends the profile's item(s) to the existing value with the setting's
#: separator, and just sets the variable when it is unset or empty.  Items already present in
#: the existing value are not removed: glibc parses ``GLIBC_TUNABLES`` left to right and a later
#: assignment of the same tunable overrides an earlier one (glibc ``elf/dl-tunables.c``,
#: ``parse_tunables``), so appending makes the profile's value the effective one while every
#: other tunable the site or user set is kept.  Sourcing a shell file twice therefore repeats
#: the item, which is harmless for the same reason.  Lmod's ``append_path`` and Environment
#: Modules' ``append-path`` keep one copy of an identical item (their own path semantics).
MERGE_POLICY = "append"


@dataclass(frozen=True)
class EnvItem:
    """One environment variable as every environment format writes it.

    :ivar name: variable name, validated against :data:`NAME_RE`.
    :ivar value: the exact string the variable gets (for a list: the items to append, joined by
        ``separator``).
    :ivar separator: ``None`` for a plain variable; for a list variable the item separator, and
        the value is appended to an existing value (:data:`MERGE_POLICY`).
    :ivar comment: one-line rationale (already sanitised: no control characters), or "".
    :ivar sources: the settings behind this item, in profile order.
    """

    name: str
    value: str
    separator: Optional[str] = None
    comment: str = ""
    sources: tuple[Source, ...] = field(default=(), compare=False)


def one_line(text: str) -> str:
    """``text`` as one comment line: every run of whitespace or control characters becomes one
    space; backslashes, braces and ``!`` are replaced so that no format gives them a meaning
    inside a comment (a Tcl comment ending in a backslash continues on the next line; Tcl counts
    braces; csh may expand ``!`` history references)."""
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch.isspace() or cat in ("Cc", "Cs", "Zl", "Zp"):
            out.append(" ")
        elif ch == "\\":
            out.append("/")
        elif ch == "{":
            out.append("(")
        elif ch == "}":
            out.append(")")
        elif ch == "!":
            out.append(".")
        else:
            out.append(ch)
    return " ".join("".join(out).split())


def first_sentence(text: str) -> str:
    """The first line of ``text``, as :func:`one_line`."""
    stripped = text.strip()
    return one_line(stripped.splitlines()[0] if stripped else "")


def _bad_char(text: str) -> Optional[str]:
    for i, ch in enumerate(text):
        if unicodedata.category(ch) in ("Cc", "Cs"):
            return f"U+{ord(ch):04X} at offset {i}"
    return None


def describe(src: Source) -> str:
    """``probe/recommendation: NAME`` for error messages."""
    return f"{src.probe}/{src.recommendation}: {src.setting.name}"


def value_string(setting: "Setting") -> str:
    """The string an environment variable gets for ``setting.value``.

    ``bool`` -> ``"1"``/``"0"``; ``int`` -> plain decimal; ``float`` -> ``repr``; ``str`` as is.
    """
    v = setting.value
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def check_value(src: Source, value: str) -> None:
    """Raise EmitError when ``value`` (or the separator) of ``src`` has a control character, or
    the setting's value is a float that is not finite (no library reads ``nan``; JSON cannot
    carry it)."""
    raw = src.setting.value
    if isinstance(raw, float) and not math.isfinite(raw):
        raise EmitError(f"setting {describe(src)}: value {raw!r} is not a finite number")
    bad = _bad_char(value)
    if bad:
        raise EmitError(f"setting {describe(src)}: value has a control character ({bad}); "
                        "it cannot be written safely in any format")
    sep = src.setting.separator
    if sep is not None:
        if len(sep) != 1 or _bad_char(sep) or sep.isalnum() or sep == "_":
            raise EmitError(f"setting {describe(src)}: list separator {sep!r} must be one "
                            "printable character that is not a letter, digit or '_'")


def check_name(src: Source) -> None:
    """Raise EmitError when the setting's name is not a portable environment variable name, or
    is one never emitted (``advisor.specs.names.refused_reason``)."""
    why = refused_reason(src.setting.name)
    if why:
        raise EmitError(f"setting {describe(src)}: refused, never emitted: {why}")
    if not NAME_RE.match(src.setting.name):
        raise EmitError(f"setting {src.probe}/{src.recommendation}: name "
                        f"{src.setting.name!r} is not a valid environment variable name "
                        f"(must match {NAME_RE.pattern})")


def _comment_for(srcs: list[Source]) -> str:
    parts = []
    seen = set()
    for src in srcs:
        text = first_sentence(src.rationale) or first_sentence(src.setting.name)
        extra = ""
        if src.setting.is_default:
            extra = " (confirms the library default)"
        elif src.setting.default is not None:
            extra = f" (library default: {value_string_of(src.setting.default)})"
        if src.veto:
            extra += f" ({src.veto})"
        line = one_line(f"{src.probe}/{src.recommendation}: {text}{extra}")
        if line not in seen:
            seen.add(line)
            parts.append(line)
    return one_line("; ".join(parts))


def value_string_of(value) -> str:
    """As :func:`value_string` for a bare scalar."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def env_items(sel: "Selection") -> list[EnvItem]:
    """The environment variables to write (``sel.sources(("env",))``), sorted by name, merged
    and validated.

    :raises EmitError: a bad name, a control character in a value, the same plain variable
        recommended with two different values, or one name used both as a list and a plain
        variable (the message names the settings involved).
    """
    groups: dict[str, list[Source]] = {}
    for src in sel.sources(("env",)):
        check_name(src)
        check_value(src, value_string(src.setting))
        groups.setdefault(src.setting.name, []).append(src)
    items = []
    for name in sorted(groups):
        srcs = groups[name]
        seps = {s.setting.separator for s in srcs}
        if len(seps) > 1:
            raise EmitError(f"variable {name}: settings disagree on the list separator "
                            f"({', '.join(describe(s) for s in srcs)})")
        sep = seps.pop()
        comment = _comment_for(srcs) if sel.comments else ""
        if sep is None:
            values = {value_string(s.setting) for s in srcs}
            if len(values) > 1:
                raise EmitError(f"variable {name}: recommended with different values by "
                                f"{', '.join(describe(s) for s in srcs)}")
            items.append(EnvItem(name, values.pop(), None, comment, tuple(srcs)))
        else:
            parts: list[str] = []
            for s in srcs:
                for part in value_string(s.setting).split(sep):
                    if part and part not in parts:
                        parts.append(part)
            if not parts:
                continue  # nothing to append
            items.append(EnvItem(name, sep.join(parts), sep, comment, tuple(srcs)))
    return items


def setting_records(sel: "Selection") -> list[dict]:
    """Every selected setting (``env`` and ``config`` kinds) as a plain dict for toml/json, in
    the order of :func:`env_items` (by name, then profile order).  Keys with no value are left
    out (TOML has no null).  ``value`` keeps the native type; ``env_value`` is the string an
    environment variable gets."""
    srcs = sel.sources(("env", "config"))
    for src in srcs:
        if src.setting.kind == "env":
            check_name(src)
        check_value(src, value_string(src.setting))
    order = sorted(range(len(srcs)), key=lambda i: (srcs[i].setting.kind, srcs[i].setting.name, i))
    out = []
    for i in order:
        src = srcs[i]
        s = src.setting
        rec: dict = {"name": s.name, "kind": s.kind, "value": s.value}
        if s.kind == "env":
            rec["env_value"] = value_string(s)
        if s.separator is not None:
            rec["separator"] = s.separator
            rec["merge"] = MERGE_POLICY
        rec["library"] = s.library
        for key in ("flavour", "type", "unit", "default", "versions"):
            val = getattr(s, key)
            if val is not None:
                rec[key] = val
        if s.is_default:
            rec["is_default"] = True
        rec["plugin"] = src.plugin
        rec["probe"] = src.probe
        rec["recommendation"] = src.recommendation
        if sel.comments:
            rec["rationale"] = first_sentence(src.rationale)
        if src.veto:  # --all wrote refuted advice: always said, like the left-out block
            rec["verify"] = one_line(src.veto)
        out.append(rec)
    return out


def header_lines(profile: "Profile") -> list[str]:
    """Provenance lines for the header comment (no comment marker, no control characters).

    Only data from the profile and the running advisor's version go in, never the time of
    emitting, so the bytes are deterministic.
    """
    import advisor

    prov = profile.provenance
    host = prov.hostname or profile.facts.hostname or "unknown host"  # a class profile: "class …"
    return [
        one_line(f"Generated by hpc-advisor {advisor.__version__} from a profile written by "
                 f"hpc-advisor {prov.advisor_version}."),
        one_line(f"Machine: {host}, fingerprint {profile.fingerprint}; "
                 f"profile created {prov.created}."),
        "Do not edit: re-run `advisor emit` to regenerate.",
    ]


def left_out_entries(sel: "Selection", kinds: Sequence[str] = ("env",), *,
                     fmt: Optional[str] = None,
                     libraries: Optional[Sequence[str]] = None) -> list[tuple[str, str, str]]:
    """``(name, value, why)`` of every selected setting a format writing ``kinds`` (and only
    ``libraries``' settings, when given) leaves out, sorted by name: the reasons of
    ``Selection.left_out`` (version excludes it, verdict, kind or library not written, with
    the built-in formats that do write it, default-confirming without ``--all``, scope
    excludes).  ``value`` is :func:`value_string`; all three are one line (:func:`one_line`).

    :param fmt: the format's name for the reasons (default ``sel.fmt``)."""
    return [(one_line(lo.setting.name), one_line(value_string(lo.setting)), one_line(lo.why))
            for lo in sel.left_out(kinds, fmt=fmt, libraries=libraries)]


def left_out_comment(sel: "Selection", kinds: Sequence[str] = ("env",), marker: str = "#", *,
                     fmt: Optional[str] = None,
                     libraries: Optional[Sequence[str]] = None) -> list[str]:
    """Comment lines ``<marker> left out: NAME=VALUE (why)`` for :func:`left_out_entries`
    (none when nothing is left out), then, with ``--all``, ``<marker> written by --all although
    refuted by advisor verify ...: NAME=VALUE`` for each refuted setting it writes
    (``Source.veto``).  Written whatever ``options.comments`` says: like the provenance
    header, it tells what the file is."""
    lines = [f"{marker} left out: {name}={value} ({why})"
             for name, value, why in left_out_entries(sel, kinds, fmt=fmt, libraries=libraries)]
    if sel.include_defaults:
        lines += [f"{marker} {one_line(src.veto)}: {one_line(src.setting.name)}="
                  f"{one_line(value_string(src.setting))}"
                  for src in sel.sources(tuple(kinds)) if src.veto and (
                      libraries is None or src.setting.library in libraries)]
    return lines


def item_file(sel: "Selection", item_lines, *, marker: str = "#",
              head: Sequence[str] = (), preamble: Sequence[str] = (),
              fmt: Optional[str] = None, items: Optional[Sequence[EnvItem]] = None) -> str:
    """The layout the line-based formats share: ``head`` lines, the provenance header and the
    left-out comment (:func:`left_out_comment`) as ``marker`` comments, ``preamble`` lines,
    then per environment item (``items``, default :func:`env_items`) a blank line, its comment
    and ``item_lines(item) -> list[str]``."""
    lines = list(head) + [f"{marker} {line}" for line in header_lines(sel.profile)]
    lines += left_out_comment(sel, ("env",), marker, fmt=fmt) + list(preamble)
    for item in env_items(sel) if items is None else items:
        lines.append("")
        if item.comment:
            lines.append(f"{marker} {item.comment}")
        lines.extend(item_lines(item))
    return "\n".join(lines) + "\n"


def refuse_unsafe(items: Sequence[EnvItem], unsafe, advice: str) -> None:
    """Raise EmitError for the first item whose value ``unsafe(value) -> reason | None``
    refuses, naming the setting, the reason and ``advice`` (which format to use instead)."""
    for item in items:
        why = unsafe(item.value)
        if why:
            src = item.sources[0] if item.sources else None
            where = f"{src.probe}/{src.recommendation}: " if src else ""
            raise EmitError(f"setting {where}{item.name}: value {why}; {advice}")
