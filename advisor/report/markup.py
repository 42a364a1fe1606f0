"""The HTML pieces the report's modules share: escaping, a table, a setting's value as shown.

Public API: :func:`escape`, :func:`table`, :func:`shown`.
"""

from __future__ import annotations

import html

__all__ = ["escape", "shown", "table"]


def escape(value) -> str:
    """``value`` as HTML text (quotes escaped too); None is ""."""
    return html.escape("" if value is None else str(value), quote=True)


def table(headers, rows) -> str:
    """A ``<table>``: ``headers`` escaped here, each row's cells already HTML."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def shown(s, v) -> str:
    """A setting's value (or default) ``v`` as ``advisor show`` writes it
    (``advisor.report.tables.setting_value``: a byte count of 1 KiB or more also in
    KiB/MiB/GiB); None is "library default unknown"."""
    from advisor.report.tables import setting_value

    return "library default unknown" if v is None else setting_value(v, s.type)
