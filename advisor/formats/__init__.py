"""The output formats: one module per format, each with ``render(profile, options) -> str`` and
``parse(text, path) -> list[EnvEntry]``, and the helpers they share.

- :mod:`~advisor.formats.sh` (``env``, alias ``sh``), :mod:`~advisor.formats.csh`,
  :mod:`~advisor.formats.fish`: shell files to source;
- :mod:`~advisor.formats.lmod`, :mod:`~advisor.formats.tcl`: modulefiles;
- :mod:`~advisor.formats.spack`, :mod:`~advisor.formats.spack_modules`,
  :mod:`~advisor.formats.easybuild`, :mod:`~advisor.formats.easybuild_hooks`,
  :mod:`~advisor.formats.reframe`: deployment and testing tools;
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
``SUFFIXES`` (the file suffixes that are this format) and ``sniff(text) -> bool`` (the file's
shape is this format's).  ``advisor.emit.builtin`` registers them through the emitter hook, as a third party
would.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional

#: The built-in format modules, in the order ``advisor emit --list`` shows them.
BUILTIN = ("sh", "csh", "fish", "lmod", "tcl", "spack", "spack-modules", "easybuild",
           "easybuild-hooks", "reframe", "toml", "json", "cxx", "cupy")


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


#: The formats whose shape decides over a file's suffix (the deployment files share suffixes
#: with other formats), in the order their ``sniff`` is tried.
SNIFF_BEFORE_SUFFIX = ("spack-modules", "easybuild-hooks", "reframe")
#: The formats whose ``sniff`` is tried when no suffix decided, in this order.
SNIFF_AFTER_SUFFIX = ("tcl", "spack", "easybuild", "json", "lmod", "toml")


#: The write-only formats (no ``parse``) whose own output ``sniff`` recognises, so that
#: ``advisor lint`` can say what such a file is instead of reading it as a shell file.
SNIFF_WRITE_ONLY = ("cxx-header", "cupy")


def _by_name() -> dict[str, ModuleType]:
    return {mod.NAME: mod for mod in builtin_modules()}


def _detected(mod: ModuleType) -> str:
    return getattr(mod, "DETECTED_AS", mod.NAME)


def _sniffed(text: str, names: tuple[str, ...]) -> Optional[str]:
    mods = _by_name()
    return next((_detected(mods[n]) for n in names if mods[n].sniff(text)), None)


def sniff_shape(text: str) -> Optional[str]:
    """The built-in format whose file shape ``text`` has, among those whose shape decides over
    the suffix (:data:`SNIFF_BEFORE_SUFFIX`); None when none."""
    return _sniffed(text, SNIFF_BEFORE_SUFFIX)


def by_suffix(suffix: str) -> Optional[str]:
    """The built-in format a file suffix (``.csh``, lower case) names (the modules'
    ``SUFFIXES``); None when none."""
    return next((_detected(mod) for mod in builtin_modules()
                 if suffix in getattr(mod, "SUFFIXES", ())), None)


def sniff_content(text: str) -> Optional[str]:
    """The built-in format ``text`` reads as when no suffix decided
    (:data:`SNIFF_AFTER_SUFFIX`); None when none."""
    return _sniffed(text, SNIFF_AFTER_SUFFIX)


def sniff_write_only(text: str) -> Optional[str]:
    """The write-only built-in format that wrote ``text`` (:data:`SNIFF_WRITE_ONLY`); None when
    none."""
    return _sniffed(text, SNIFF_WRITE_ONLY)
