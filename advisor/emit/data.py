"""Data formats: ``toml`` and ``json``.

Both write the *selected settings* of a profile (``env`` and ``config`` kinds), not the whole
profile (the profile already is a TOML file): a document

``{"advisor": {provenance...}, "settings": [{name, kind, value, env_value, ...}, ...]}``

where ``value`` keeps its native type (bool, int, float, str), ``env_value`` is the string an
environment format writes, list settings carry ``separator`` and ``merge = "append"``, and
``rationale`` is present unless ``--no-comments``.  Settings are ordered by kind, then name, then
profile order.  Keys with no value are left out (TOML has no null).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from advisor.emit.common import header_lines, setting_records

if TYPE_CHECKING:  # pragma: no cover
    from advisor.emit import EmitOptions
    from advisor.models import Profile


def _document(profile: "Profile", options: "EmitOptions") -> dict:
    import advisor

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
    return {"advisor": head, "settings": setting_records(profile, options)}


def render_json(profile: "Profile", options: "EmitOptions") -> str:
    """JSON (RFC 8259), two-space indented, UTF-8 text (non-ASCII kept literal)."""
    return json.dumps(_document(profile, options), indent=2, ensure_ascii=False) + "\n"


def render_toml(profile: "Profile", options: "EmitOptions") -> str:
    """TOML 1.0 written by ``tomli_w``, after a provenance comment header."""
    import tomli_w

    head = "".join(f"# {line}\n" for line in header_lines(profile))
    return head + tomli_w.dumps(_document(profile, options))
