"""What the data formats ``toml`` and ``json`` share: the document they write and its reader.

Both write the *selected settings* of a profile (``env`` and ``config`` kinds), not the whole
profile (the profile already is a TOML file): a document

``{"advisor": {provenance...}, "settings": [{name, kind, value, env_value, ...}, ...]}``

where ``value`` keeps its native type (bool, int, float, str), ``env_value`` is the string an
environment format writes, list settings carry ``separator`` and ``merge = "append"``, and
``rationale`` is present unless ``--no-comments``.  Settings are ordered by kind, then name, then
profile order.  Keys with no value are left out (TOML has no null).  ``left_out`` (present when
not empty) lists the selected settings the document does not hold, each ``{name, value, why}``
(``advisor.specs.writing.left_out_entries``: version excludes it, default-confirming without
``--all``, excluded by a scope).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Optional

from advisor.errors import BadInputError
from advisor.specs.writing import left_out_entries, setting_records
from advisor.specs.entry import EnvEntry, entry_or_problem, is_scalar, scalar_text

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection


def document(sel: "Selection", fmt: str = "toml") -> dict:
    """``{"advisor": provenance, "settings": setting_records(...), "left_out": [...]}`` (see
    the module docstring)."""
    import advisor

    profile = sel.profile
    prov = profile.provenance
    head = {
        "generator": f"hpc-advisor {advisor.__version__}",
        "profile_advisor_version": prov.advisor_version,
        "profile_created": prov.created,
        "fingerprint": profile.fingerprint,
    }
    host = profile.facts.hostname or prov.hostname
    if host is not None:
        head["machine"] = host
    doc = {"advisor": head, "settings": setting_records(sel)}
    left = left_out_entries(sel, ("env", "config"), fmt=fmt)
    if left:
        doc["left_out"] = [{"name": n, "value": v, "why": w} for n, v, w in left]
    return doc


def line_of(lines: list[str], pattern: re.Pattern, start: int) -> tuple[Optional[int], int]:
    """``(1-based line, next start)`` of the first line from ``start`` matching ``pattern``;
    ``(None, start)`` when none does."""
    for i in range(start, len(lines)):
        if pattern.search(lines[i]):
            return i + 1, i + 1
    return None, start


def parse_structured(text: str, path: str, fmt: str) -> list[EnvEntry]:
    """The environment settings of a ``fmt`` ("json" or "toml") text: an ``advisor emit``
    document (key ``settings``), a profile (key ``schema_version``) or, for JSON, an object of
    names to values.

    :raises BadInputError: malformed text, nested deeper than ``advisor.nesting.MAX_DEPTH``, a
        value no variable can hold, or another shape.
    """
    from advisor.nesting import load_json, load_toml

    data = load_json(text, path) if fmt == "json" else load_toml(text, path)
    items: list[tuple[str, str, Optional[str]]] = []
    if isinstance(data, dict) and isinstance(data.get("settings"), list):  # advisor emit json/toml
        for s in data["settings"]:
            if isinstance(s, dict) and s.get("kind", "env") == "env" and isinstance(s.get("name"), str):
                v = s.get("env_value", s.get("value"))
                items.append((s["name"], scalar_text(v), s.get("separator")
                              if s.get("merge") == "append" else None))
    elif isinstance(data, dict) and "schema_version" in data:  # a profile
        from advisor.profile import profile_from_mapping

        prof = profile_from_mapping(data, source=path)
        for _res, _rec, s in prof.settings(include_defaults=True):
            items.append((s.name, scalar_text(s.value), s.separator))
    elif fmt == "json" and isinstance(data, dict) and data and "settings" not in data:
        bad = next((k for k, v in data.items() if not is_scalar(v)), None)
        if bad is not None:  # {"NAME": value, ...} with a value no variable can hold
            raise BadInputError(f"{path}: key {bad!r}: {json.dumps(data[bad])[:40]} is not a "
                                "value an environment variable can hold (string, number, "
                                "boolean)")
        lines = text.splitlines()
        out, pos = [], 0
        for name, value in data.items():
            line, pos = line_of(lines, re.compile(r'"' + re.escape(json.dumps(name)[1:-1])
                                                   + r'"\s*:'), pos)
            out.append(entry_or_problem(str(name), scalar_text(value), path, line))
        return out
    else:
        raise BadInputError(f"{path}: {fmt.upper()} file is neither an 'advisor emit' output "
                            "(key 'settings'), a profile (key 'schema_version')"
                            + (" nor an object of names to values" if fmt == "json" else ""))
    lines = text.splitlines()
    pos = 0
    out = []
    for name, value, sep in items:
        pat = re.compile(r"[\"']?name[\"']?\s*[:=]\s*[\"']" + re.escape(name) + r"[\"']")
        line, pos = line_of(lines, pat, pos)
        out.append(EnvEntry(name, value, path, line, True, append=sep is not None, separator=sep,
                            from_advisor=True))
    return out
