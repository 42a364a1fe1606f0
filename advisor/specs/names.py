"""Names ``advisor emit`` never writes, and the rule that it writes only declared names.

A profile is data from a probe run (possibly another machine's, possibly edited).  Whatever it
holds, an emitted file must not hand a shell, a module tool, the dynamic loader, a language
runtime or a tool code to run or a path to search: those names are refused in every format,
even when a plugin declares them.  The tables are kept per consumer, by kind, each entry with
the reason and where the behaviour is documented (:mod:`advisor.specs.refused`);
:data:`REFUSED` and :data:`REFUSED_PREFIXES` are their union and :func:`refused_by` names the
consumers of one name.
Every other name is written only when a registered knob declares it (:func:`declared_names`).

Names deliberately *not* refused: ``GLIBC_TUNABLES`` (a product setting the host-buffer plugin
recommends; its items are checked against knob records one by one) and the ``MALLOC_*``
variables other than ``MALLOC_TRACE`` (``MALLOC_ARENA_MAX``, ``MALLOC_TOP_PAD_``, ... are the
older spellings of glibc malloc tunables: numbers, neither code nor paths; glibc manual,
"Memory Allocation Tunables").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

from advisor.specs.refused import CONSUMERS, Consumer

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.models import Setting

#: name -> (why it is refused, where that is documented), every consumer's names together
#: (the first consumer in ``CONSUMERS`` order that lists a name gives its entry)
REFUSED: dict[str, tuple[str, str]] = {}
#: prefix -> (why, source): every name with the prefix is refused.
REFUSED_PREFIXES: dict[str, tuple[str, str]] = {}
for _c in CONSUMERS:
    for _name, _entry in _c.names.items():
        REFUSED.setdefault(_name, _entry)
    for _name, _entry in _c.prefixes.items():
        REFUSED_PREFIXES.setdefault(_name, _entry)
del _c, _name, _entry


def refused_by(name: str) -> list[tuple[Consumer, str, str]]:
    """Every consumer that reads ``name`` as code or a path: ``(consumer, why, source)`` in
    ``CONSUMERS`` order, by exact name first, then by documented prefix; empty when none."""
    out = []
    for c in CONSUMERS:
        hit = c.names.get(name) or next((v for p, v in c.prefixes.items()
                                         if name.startswith(p)), None)
        if hit is not None:
            out.append((c, *hit))
    return out


def refused_reason(name: str) -> Optional[str]:
    """Why ``name`` is never emitted (reason and source in one phrase, then the other
    consumers that read it), or None."""
    hits = refused_by(name)
    if not hits:
        return None
    first, why, source = hits[0]
    others = [c.name for c, _, _ in hits[1:]]
    return f"{why} ({source})" + (f"; also read by {', '.join(others)}" if others else "")


def declared_names(knobs: Iterable["Knob"]) -> frozenset[str]:
    """Every name a knob record declares: ``Knob.name`` and each of ``Knob.aliases``."""
    out: set[str] = set()
    for k in knobs:
        out.add(k.name)
        out.update(k.aliases)
    return frozenset(out)


def undeclared(setting: "Setting", declared: frozenset[str]) -> list[str]:
    """The names in ``setting`` that no knob declares: the setting's name and, for a list
    variable (``separator`` set, e.g. ``GLIBC_TUNABLES``), the name of each ``name=value`` item
    (glibc reads ``GLIBC_TUNABLES`` as ``tunable=value`` items; glibc manual, "Tunables")."""
    return undeclared_in(setting.name, setting.value if isinstance(setting.value, str) else None,
                         setting.separator, declared)


def undeclared_in(name: str, value: Optional[str], separator: Optional[str],
                  declared: frozenset[str]) -> list[str]:
    """``undeclared`` for a name, value and list separator read back from a file (lint)."""
    out = [] if name in declared else [name]
    if separator and value:
        for item in value.split(separator):
            iname, eq, _ = item.partition("=")
            if item and eq and iname not in declared:
                out.append(iname)
    return out
