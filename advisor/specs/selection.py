"""What one ``advisor emit`` decided, as every format receives it: the :class:`Selection`.

``advisor.emit.decide`` computes it once per emit; a format's ``render(selection) -> str``
(built-in or a plugin's) reads it and decides nothing about library versions or verdicts.  It
holds every selected setting (by ``EmitOptions.plugins``; every kind, defaults included), each
with the emit's one decision about it (:class:`Source`): kept, or left out with its cause
(:class:`LeftOut`: the recorded library version does not read it, or ``advisor verify``
refuted its recommendation on the profile's machine class).  What a format leaves out for
its own reasons (a kind or a library it does not write, a default-confirming setting without
``--all``) is read from the same records by :meth:`Selection.left_out`.

Pure data and pure queries: this module imports only the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Collection, Mapping, Optional, Sequence, Union

from packaging.utils import canonicalize_name

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile, Setting

__all__ = ["EmitOptions", "ModuleDeps", "MODULE_DEPENDENCIES", "LeftOut", "Source", "Selection",
           "CAUSES"]


#: The forms of :attr:`ModuleDeps.dependency` (:mod:`advisor.formats.moddeps` writes each).
MODULE_DEPENDENCIES = ("prereq", "depends_on", "family", "none")


@dataclass(frozen=True)
class ModuleDeps:
    """How the ``lmod`` and ``tcl`` modules name the MPI module the profile was measured with
    (the site configuration's ``[modules]``, ``emit --mpi-module``/``--module-dependency``).

    :ivar dependency: one of :data:`MODULE_DEPENDENCIES`: ``prereq`` (loading fails until the
        MPI module is loaded), ``depends_on`` (loading loads it), ``family`` (the module loaded
        as the MPI family's member must be that MPI), ``none``.
    :ivar mpi: ``(library, module name)`` pairs (``(mpich, mpich/4.3.2)``); a library not
        listed gets ``LIBRARY/VERSION`` from the profile's recorded version.
    :ivar family: the family name the site's MPI modules declare (``family("MPI")``).
    """

    dependency: str = "prereq"
    mpi: tuple[tuple[str, str], ...] = ()
    family: str = "MPI"


@dataclass(frozen=True)
class EmitOptions:
    """What ``advisor emit`` writes.

    :ivar comments: a one-line rationale per setting (``--no-comments`` sets False); the
        provenance header is always written.
    :ivar include_defaults: also settings that only confirm the library default, and those of
        recommendations ``advisor verify`` refuted on the profile's machine class, each with a
        comment naming the verdict (``--all``; ``advisor.emit.veto``).
    :ivar plugins: keep only settings of these probe or plugin names (``--plugin``); None: all;
        an empty set selects nothing.
    :ivar refuse_undeclared: refuse a setting whose name (or list item name) no knob of the
        registry declares (the CLI; ``advisor.specs.names.undeclared``).  False (format unit
        tests with made-up names) skips that one check; names never emitted are refused
        regardless, and the knobs' version ranges and value types apply either way.
    :ivar left_out: :class:`LeftOut` entries decided before the selection (cause ``"scope"``:
        a configuration scope's excludes, ``advisor.config.apply``), so the format's left-out
        comment names them.
    :ivar spec_range: ``spack-modules``: the versions a package block covers, ``"exact"``
        (``mpich@5.0.2``), ``"minor"`` (``mpich@5.0``) or ``"major"`` (``mpich@5``)
        (``--spec-range``, ``[spack] spec_range``; ``advisor.formats.spack_modules``).
    :ivar every_program: ``spack-modules``: where the settings every program reads go
        (GLIBC_TUNABLES): ``"all"``, ``"separate"`` or a tuple of Spack specs
        (``[spack] every_program``).
    """

    comments: bool = True
    include_defaults: bool = False
    plugins: Optional[frozenset[str]] = None
    refuse_undeclared: bool = False
    left_out: tuple = field(default=(), compare=False, hash=False)
    modules: ModuleDeps = ModuleDeps()
    spec_range: str = "exact"
    every_program: Union[str, tuple[str, ...]] = "all"


#: The causes of :class:`LeftOut`, in the order a reason is looked for.
CAUSES = ("scope", "version", "verdict", "kind", "library", "default")


@dataclass(frozen=True)
class LeftOut:
    """One selected setting a format does not write.

    :ivar probe: the probe whose recommendation holds the setting.
    :ivar recommendation: the recommendation id.
    :ivar setting: the setting.
    :ivar cause: ``"version"`` (the recorded library version or flavour excludes it),
        ``"verdict"`` (``advisor verify`` refuted its recommendation on the profile's machine
        class: ``advisor.emit.veto``; without ``--all``), ``"kind"`` (the format writes no
        setting of its kind), ``"library"`` (the format writes only other libraries'
        settings), ``"default"`` (only confirms the library default, without ``--all``) or
        ``"scope"`` (excluded by a configuration scope, ``EmitOptions.left_out``).
    :ivar why: the reason, one human phrase that does not repeat the setting's name.
    """

    probe: str
    recommendation: str
    setting: "Setting"
    cause: str
    why: str


@dataclass(frozen=True)
class Source:
    """One selected setting with where it came from and what the emit decided about it.

    :ivar plugin: the plugin of the probe result.
    :ivar probe: the probe name.
    :ivar recommendation: the recommendation id.
    :ivar rationale: the recommendation's title (its one-line "why").
    :ivar setting: the setting.
    :ivar veto: with ``--all``, the verdict that refuted the recommendation on the profile's
        machine class (``written by --all although refuted by advisor verify ...``); "".
    :ivar drop: why the emit left it out whatever the format (cause ``"version"`` or
        ``"verdict"``); None: a format may write it.
    :ivar writers: the built-in formats that write a setting of its kind and library (for the
        "written by --format ..." hint of a format that does not).
    """

    plugin: str
    probe: str
    recommendation: str
    rationale: str
    setting: "Setting"
    veto: str = ""
    drop: Optional[LeftOut] = field(default=None, compare=False)
    writers: tuple[str, ...] = field(default=(), compare=False)


#: How :meth:`Selection.nothing_to_write` sums up each cause (``{n}``: count, ``{fmt}``).
_CAUSE_TEXT = {
    "version": "{n} not read by the recorded library versions",
    "verdict": "{n} refuted by advisor verify on this machine class (--all writes them)",
    "scope": "{n} excluded by a configuration scope",
    "kind": "{n} of a kind {fmt} does not write",
    "library": "{n} of libraries {fmt} does not write",
    "default": "{n} only confirm the library default (--all writes them)",
}


@dataclass(frozen=True)
class Selection:
    """Everything one emit decided, for the format that renders it.

    :ivar profile: the profile (after the configuration scopes), for the header, the
        provenance, the verdicts and the recommendations' records; its settings are read
        through :attr:`chosen`, never directly.
    :ivar chosen: every selected setting (every kind, defaults included), in profile order.
    :ivar options: the options the selection was made with.
    :ivar fmt: the format being written (its name, for reasons and messages).
    :ivar libraries: library name -> ``advisor.libraries.Library`` record (the registry's), for
        a format that names a library's package (spack-modules, easybuild-hooks).
    :ivar source: the profile file's path as the emit read it (None: not from a file), for a
        format that names it (reframe-test runs ``advisor check --profile`` on it).
    """

    profile: "Profile"
    chosen: tuple[Source, ...]
    options: EmitOptions = EmitOptions()
    fmt: str = "this format"
    libraries: Mapping[str, Any] = field(default_factory=dict, compare=False)
    source: Optional[str] = None

    @property
    def comments(self) -> bool:
        """``options.comments``."""
        return self.options.comments

    @property
    def include_defaults(self) -> bool:
        """``options.include_defaults`` (``--all``)."""
        return self.options.include_defaults

    def sources(self, kinds: Sequence[str] = ("env",)) -> list[Source]:
        """The settings a format writing ``kinds`` gets, in profile order: not left out by the
        emit (``Source.drop``), default-confirming ones only with ``--all``."""
        return [c for c in self.chosen if c.drop is None and c.setting.kind in kinds
                and (self.include_defaults or not c.setting.is_default)]

    def dropped(self) -> list[LeftOut]:
        """The settings the emit left out for every format (causes ``version``, ``verdict``),
        in profile order."""
        return [c.drop for c in self.chosen if c.drop is not None]

    def left_out(self, kinds: Sequence[str] = ("env",), *, fmt: Optional[str] = None,
                 libraries: Optional[Collection[str]] = None) -> list[LeftOut]:
        """Every selected setting a format writing ``kinds`` (and, when given, only settings of
        ``libraries``: PEP 503 names) leaves out, with the first reason that applies, in
        this order: excluded by a configuration scope (``options.left_out``), the recorded
        library version excludes it, verify refuted its recommendation, its kind, its
        library, it only confirms the default (without ``--all``).  Sorted by name, then
        profile order; one entry per setting.

        :param fmt: the format's name for the reason text (default :attr:`fmt`).
        """
        fmt = fmt or self.fmt
        out: list[LeftOut] = list(self.options.left_out)
        if self.options.plugins is not None and not self.options.plugins:
            return []  # an explicit empty filter selects nothing
        seen = {(lo.probe, lo.recommendation, lo.setting.name, repr(lo.setting.value))
                for lo in out}
        libs = {canonicalize_name(x) for x in libraries} if libraries is not None else None
        for c in self.chosen:
            s = c.setting
            key = (c.probe, c.recommendation, s.name, repr(s.value))
            if key in seen:
                continue
            seen.add(key)
            if c.drop is not None:
                out.append(c.drop)
            elif s.kind not in kinds:
                out.append(LeftOut(c.probe, c.recommendation, s, "kind",
                                   f"{s.library} {s.kind} setting, not written by {fmt}"
                                   + (f"; written by --format {', '.join(c.writers)}"
                                      if c.writers else "")))
            elif libs is not None and canonicalize_name(s.library) not in libs:
                out.append(LeftOut(c.probe, c.recommendation, s, "library",
                                   f"a setting of {s.library}; {fmt} writes only "
                                   f"{', '.join(sorted(libs))} settings"))
            elif s.is_default and not self.include_defaults:
                out.append(LeftOut(c.probe, c.recommendation, s, "default",
                                   "only confirms the library default; --all writes it"))
        order = {id(lo): i for i, lo in enumerate(out)}
        return sorted(out, key=lambda lo: (lo.setting.name, order[id(lo)]))

    def selected_status(self) -> str:
        """Each selected probe's status (and reason), ``; ``-joined, or "no probe"."""
        sel = self.options.plugins
        return "; ".join(f"{r.probe}: {r.status}" + (f" ({r.reason})" if r.reason else "")
                         for r in self.profile.results
                         if sel is None or r.probe in sel or r.plugin in sel) or "no probe"

    def nothing_to_write(self, kinds: Sequence[str] = ("env",), fmt: Optional[str] = None,
                         libraries: Optional[Collection[str]] = None) -> str:
        """The one-line reason why the format has nothing to write, for the ``EmitError`` of a
        format whose empty output would be useless (a module, a configuration snippet): the
        :meth:`left_out` settings counted by cause, or, when nothing is selected at all, each
        selected probe's status.  Example: ``nothing to write as lmod: 2 setting(s) only
        confirm the library default (--all writes them)``."""
        fmt = fmt or self.fmt
        los = self.left_out(kinds, fmt=fmt, libraries=libraries)
        if not los:
            return (f"nothing to write as {fmt}: the selected probes made no recommendation "
                    f"({self.selected_status()})")
        counts: dict[str, int] = {}
        for lo in los:
            counts[lo.cause] = counts.get(lo.cause, 0) + 1
        parts = [_CAUSE_TEXT[c].format(n=f"{counts[c]} setting(s)", fmt=fmt)
                 for c in _CAUSE_TEXT if c in counts]
        return f"nothing to write as {fmt}: " + "; ".join(parts)
