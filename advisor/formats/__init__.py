"""The output formats: one module per format, each with ``render(profile, options) -> str`` and
``parse(text, path) -> list[EnvEntry]``, and the helpers they share.

- :mod:`~advisor.formats.sh` (``env``, alias ``sh``), :mod:`~advisor.formats.csh`,
  :mod:`~advisor.formats.fish`: shell files to source;
- :mod:`~advisor.formats.lmod`, :mod:`~advisor.formats.tcl`: modulefiles;
- :mod:`~advisor.formats.spack`, :mod:`~advisor.formats.spack_modules`,
  :mod:`~advisor.formats.easybuild`, :mod:`~advisor.formats.easybuild_hooks`,
  :mod:`~advisor.formats.reframe`, :mod:`~advisor.formats.reframe_test`: deployment and
  testing tools;
- :mod:`~advisor.formats.nhc`, :mod:`~advisor.formats.slurm_healthcheck` (with
  :mod:`~advisor.formats.healthcheck`): node health checks running ``advisor check``;
- :mod:`~advisor.formats.toml`, :mod:`~advisor.formats.json`: the selected settings as data;
- :mod:`~advisor.formats.cxx` (``cxx-header``), :mod:`~advisor.formats.cupy` (``cupy``):
  config-kind settings as the snippet their consumer reads (write-only);
- :mod:`~advisor.specs.writing` (selecting, validating, merging), :mod:`~advisor.formats.quoting`
  (quoting per language, what module tools mangle), :mod:`~advisor.specs.names` (names never
  emitted, declared names), :mod:`~advisor.specs.entry` (``EnvEntry``),
  :mod:`~advisor.formats.shellread` and :mod:`~advisor.formats.launch` (reading shell files and
  launch lines), :mod:`~advisor.formats.structured` (the toml/json document).

Each format module has ``render(selection)`` and, unless write-only, ``parse``, and names
itself: ``NAME``, ``DESCRIPTION``, ``EXTENSION`` and optionally ``ALIASES``, ``KINDS`` (the
setting kinds it writes; default ``("env",)``), ``LIBRARIES`` (PEP 503 names of the only
libraries whose settings it writes; default: any), and, for ``advisor lint --format auto``,
``SUFFIXES`` (the file suffixes that are this format), ``sniff(text) -> bool`` (the text's
shape is this format's), ``SNIFF_OVER_SUFFIX`` (the shape decides over the suffix) and
``STRUCTURED`` (``parse`` refuses what it cannot read).  A file that neither a suffix nor a
``sniff`` claims is refused by lint.  ``advisor.emit.builtin`` registers them through the
emitter hook, as a third party would.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional

#: The built-in format modules, in the order ``advisor emit --list`` shows them.
BUILTIN = ("sh", "csh", "fish", "lmod", "tcl", "spack", "spack-modules", "easybuild",
           "easybuild-hooks", "reframe", "reframe-test", "nhc", "slurm-healthcheck", "toml",
           "json", "cxx", "cupy")


def builtin_modules() -> list[ModuleType]:
    """The built-in format modules, in :data:`BUILTIN` order."""
    return [importlib.import_module(f"advisor.formats.{name.replace('-', '_')}")
            for name in BUILTIN]


def builtin_parsers() -> dict[str, object]:
    """Format name (and alias) -> ``parse`` of every built-in format, for reading without a
    plugin registry."""
    out: dict[str, object] = {}
    for mod in builtin_modules():
        if getattr(mod, "parse", None) is None:
            continue  # write-only (a configuration snippet, not an environment file)
        for name in (mod.NAME, *getattr(mod, "ALIASES", ())):
            out[name] = mod.parse
    return out


def kinds_of(mod: ModuleType) -> tuple[str, ...]:
    """The setting kinds a format module writes (``KINDS``, default ``("env",)``)."""
    return tuple(getattr(mod, "KINDS", ("env",)))


def writers_of(setting) -> list[str]:
    """Names of the built-in formats that write ``setting`` (its kind, and its library where a
    format writes only some libraries' settings), in :data:`BUILTIN` order."""
    from packaging.utils import canonicalize_name

    lib = canonicalize_name(setting.library)
    out = []
    for mod in builtin_modules():
        libs = getattr(mod, "LIBRARIES", None)
        if setting.kind in kinds_of(mod) and (libs is None or lib in libs):
            out.append(mod.NAME)
    return out


def has_line(text: str, prefix: str) -> bool:
    """Whether a line of ``text`` starts with ``prefix`` (a plain string search: the ``sniff``
    of a format whose shape decides over the suffix runs on every file lint reads)."""
    return text.startswith(prefix) or ("\n" + prefix) in text


def _sniffs(mod: ModuleType) -> bool:
    return callable(getattr(mod, "sniff", None))


def _decides(mod: ModuleType) -> bool:
    return bool(getattr(mod, "SNIFF_OVER_SUFFIX", False))


def _detected(mod: ModuleType) -> str:
    return getattr(mod, "DETECTED_AS", mod.NAME)


def _first(text: str, mods: list[ModuleType]) -> Optional[str]:
    return next((_detected(m) for m in mods if m.sniff(text)), None)


def sniff_shape(text: str) -> Optional[str]:
    """The readable built-in format whose file shape ``text`` has, among those whose shape
    decides over the suffix (``SNIFF_OVER_SUFFIX``: the deployment files share suffixes with
    other formats, a modulefile's ``#%Module`` cookie is the module tools' own test), in
    :data:`BUILTIN` order; None when none."""
    return _first(text, [m for m in builtin_modules() if _decides(m) and _sniffs(m)
                         and getattr(m, "parse", None) is not None])


def by_suffix(suffix: str) -> Optional[str]:
    """The built-in format a file suffix (``.csh``, lower case) names (the modules'
    ``SUFFIXES``); None when none."""
    return next((_detected(mod) for mod in builtin_modules()
                 if suffix in getattr(mod, "SUFFIXES", ())), None)


def sniff_content(text: str) -> Optional[str]:
    """The readable built-in format whose ``sniff`` claims ``text`` when no suffix decided, in
    :data:`BUILTIN` order; None when none (lint then refuses the file)."""
    return _first(text, [m for m in builtin_modules() if not _decides(m) and _sniffs(m)
                         and getattr(m, "parse", None) is not None])


def sniff_write_only(text: str) -> Optional[str]:
    """The write-only built-in format (no ``parse``) whose ``sniff`` recognises ``text`` as its
    own output; None when none."""
    return _first(text, [m for m in builtin_modules() if _sniffs(m)
                         and getattr(m, "parse", None) is None])


def is_structured(name: str) -> bool:
    """Whether the built-in format ``name`` refuses what it cannot read (``STRUCTURED``), so
    an empty result is a true "sets nothing"."""
    return any(bool(getattr(m, "STRUCTURED", False)) for m in builtin_modules()
               if name in (m.NAME, getattr(m, "DETECTED_AS", None), *getattr(m, "ALIASES", ())))
