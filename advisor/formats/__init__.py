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

Each format module has ``render`` and, unless write-only, ``parse``, and names itself: ``NAME``, ``DESCRIPTION``, ``EXTENSION`` and optionally
``ALIASES``, ``KINDS`` (the setting kinds it writes; default ``("env",)``) and ``LIBRARIES``
(PEP 503 names of the only libraries whose settings it writes; default: any).  ``advisor.emit.builtin`` registers them through the emitter hook, as a third party
would.
"""

from __future__ import annotations

import importlib
from types import ModuleType

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
