"""glibc as a library record: the ``GLIBC_TUNABLES`` list variable, ``ld.so --list-tunables``
as its catalogue and ``strtoul`` base-0 numbers as its value grammar.

glibc reads tunables only from ``GLIBC_TUNABLES``, ``name=value`` items separated by ``:``,
later items overriding earlier ones (glibc manual, "Tunables"; ``elf/dl-tunables.c``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Optional

from advisor import hookimpl
from advisor.libraries.glibc_tunables import find_ld_so, list_tunables_text, parse_list_tunables, parse_number
from advisor.libraries.record import Catalogue, CatalogueEntry, Library, Problem, ValueGrammar, \
    size_bytes

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.models import Facts

NAME = "glibc"
LIST_VARIABLE = "GLIBC_TUNABLES"


def parse_glibc_tunables(text: str, source: str = "ld.so --list-tunables") -> Catalogue:
    """``ld.so --list-tunables`` output (glibc >= 2.33) -> catalogue with min/max
    (``advisor.libraries.glibc_tunables.parse_list_tunables``); the type word is ``number`` or ``string``."""
    cat = Catalogue(NAME, source)
    for name, t in parse_list_tunables(text).items():
        numeric = t.min is not None
        cat.entries[name] = CatalogueEntry(name, "number" if numeric else "string",
                                           t.text, (), t.min, t.max,
                                           category=".".join(name.split(".")[:2]))
    return cat


@functools.lru_cache(maxsize=None)
def _installed(ld: str) -> Optional[Catalogue]:
    # a clean environment: the listed values are then glibc's defaults, not this shell's
    text = list_tunables_text(env={})
    if not text:
        return None
    cat = parse_glibc_tunables(text, source=f"{ld} --list-tunables")
    return cat if cat.entries else None


def catalogue(facts: Optional["Facts"]) -> Optional[Catalogue]:
    """The tunables of the glibc here from ``ld.so --list-tunables``; None when unavailable."""
    ld = find_ld_so()
    return _installed(ld) if ld else None


def version(facts: "Facts") -> Optional[str]:
    return facts.kernel.glibc_version


class StrtoulValues(ValueGrammar):
    """glibc reads numbers with ``strtoul(..., 0)``: decimal, ``0x`` hex, leading-0 octal
    (``advisor.libraries.glibc_tunables.parse_number``), so ``0400000000`` is octal, not an error."""

    def number(self, text: str, typ: str) -> Optional[float]:
        if typ in ("int", "bytes"):
            n = parse_number(text)
            return float(n) if n is not None else None
        return super().number(text, typ)

    def check_listed(self, name: str, value: str, entry: CatalogueEntry, source: str,
                     knob: Optional["Knob"]) -> tuple[Optional[Problem], bool]:
        if entry.type != "number":
            return None, False
        n = parse_number(value)
        if n is None:
            size = size_bytes(value)
            return Problem("error", f"{value!r} is not a number glibc reads (decimal, 0x hex, "
                           "0 octal)", f"write {name}={size}" if size is not None
                           else "give an integer"), True
        if (entry.minimum is not None and n < entry.minimum) or (
                entry.maximum is not None and n > entry.maximum):
            return Problem("error", f"{value} is outside [{entry.minimum}, {entry.maximum}] "
                           f"listed by the installed glibc; glibc ignores it",
                           "give a value inside the range"), True
        t = value.strip()
        if len(t) > 1 and t.startswith("0") and t.isdigit():  # legal, and easy to misread
            return Problem("info", f"{t} has a leading 0, so glibc reads it as octal: {n} "
                           f"({n / (1 << 20):g} MiB), not {int(t, 10)}",
                           f"write {name}={n} (or {hex(n)}) to say it plainly",
                           id="octal-value"), False
        return None, False

    def same(self, value: str, default: Optional[str]) -> bool:
        a, b = parse_number(value), parse_number(default)
        return a is not None and a == b


def record() -> Library:
    return Library(name=NAME, list_variable=LIST_VARIABLE, item_separator=":",
                   item_prefix="glibc.", version=version, catalogue=catalogue,
                   list_tool="ld.so --list-tunables",
                   version_field="kernel.glibc_version",
                   values=StrtoulValues(), description="glibc tunables (GLIBC_TUNABLES)",
                   # no module or easyconfig is built for the system C library: every program
                   # reads its tunables, which is Spack's "all" section of modules.yaml
                   packages=(("spack", "all"),),
                   source="glibc manual, Tunables; elf/dl-tunables.c")


@hookimpl
def advisor_register_libraries(register):
    register(record())
