"""Spack ``modules.yaml`` (format ``spack-modules``): each setting in the ``environment`` block of
the module of the package that reads it, at the version the profile measured.

Shape (Spack's own schema, ``spack.schema.modules``; the dump in
tests/data/spack/modules-schema.json is checked against every emitted file)::

    modules:
      default:              # the module set Spack configures out of the box
        lmod:
          all:              # settings every program reads (GLIBC_TUNABLES), by default
            environment:
              append_path: {GLIBC_TUNABLES: "glibc.malloc.hugetlb=1"}
          mpich@5.0.2:      # a spec: the modules of every installed mpich 5.0.2
            environment:
              set: {MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD: "16384"}
        tcl: {...}          # the same blocks again: Spack writes only the enabled kinds

Keys (:func:`spec_key`): the package the library's record names (``Library.package("spack")``:
``mpich``, ``openmpi``, ``ucx``, ``dla-future``, ``py-cupy``; a library without a record or
without a Spack name: the library name itself, ``umpire``) at the version the profile records
(``advisor.libraries.version_of``: ``facts.mpi.version`` for MPICH and Open MPI, the Python
distribution's version otherwise).  ``spec_range`` (``--spec-range``, ``[spack] spec_range``)
widens it: ``exact`` ``mpich@5.0.2``, ``minor`` ``mpich@5.0``, ``major`` ``mpich@5``.  Spack
reads ``@5.0`` as the range ``@5.0:5.0``, 5.0 and every 5.0.x, and ``@5.0.2`` as 5.0.2 and any
version extending it (``5.0.2-custom``); ``@=5.0.2`` would be that one version only, and
``@5.0:`` 5.0 and every later release, 6.x included (Spack documentation, "Basic Usage",
"Version specifier": "In general it is preferable to use the range syntax").  A library whose
version the profile does not record keeps the bare package name (every installed version), with
a comment in the file and a warning on stderr (:func:`notes`).

Settings every program reads: a library whose record names Spack's ``all`` (glibc, the C
library every dynamically linked program loads, so no one package owns its tunables).
``every_program`` (``[spack] every_program``) places them: ``"all"`` (every module Spack
writes), a list of specs (``["openmpi", "hpl"]``: those packages' modules), or
``"separate"``: the module of :data:`SEPARATE_PACKAGE`, a bundle package shipped in
packaging/spack that installs nothing.  ``modules.yaml`` configures the modules of installed
specs only (``projections`` rename them, another module set writes them all again), so a module
of its own needs a package of its own.  Spack evaluates ``all`` first and the other keys top to
bottom, merging every key a spec satisfies (Spack documentation, "Modules", "Setting environment
variables for selected packages in config").  Include the file as a configuration scope or merge
it into the site's ``modules.yaml``; then ``spack module lmod refresh`` (or ``tcl``) regenerates
the modules.

Actions: a plain variable goes to ``set``; a list variable (``GLIBC_TUNABLES``, ``:``) to
``append_path``, which Spack writes as ``append_path(NAME, value, ":")`` (Lmod) and
``append-path --delim ":"`` (Tcl) so loading several modules keeps one copy of each item.  A
list whose separator is not ``:`` or whose items ``os.path.normpath`` would change goes to
``set`` (overwriting), as in the ``spack`` format (:func:`advisor.formats.spack._spack_appendable`).

What Spack cannot carry: its module templates paste the value between double quotes without
escaping (``share/spack/templates/modules/modulefile.lua`` and ``modulefile.tcl``:
``setenv("{{ cmd.name }}", "{{ cmd.value }}")``), so ``"`` and ``\\`` would end or escape the
Lua/Tcl string and ``$``, ``[``, ``]`` are Tcl substitution; ``{`` and ``}`` are Spack's own
spec-format tokens in ``environment`` names and values (Spack documentation, "Modules",
"Setting environment variables dynamically").  Such a value is refused (``EmitError`` naming
the setting): use the ``lmod`` or ``tcl`` format for it.

``parse`` reads the file back: every ``set``/``append_path``/``prepend_path`` of every package
block, line numbers from the YAML nodes.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any, Mapping, Optional

from advisor.errors import BadInputError, EmitError
from advisor.libraries import version_of
from advisor.specs.writing import (EnvItem, env_items, header_lines, left_out_comment,
                                    refuse_unsafe)
from advisor.specs.entry import EnvEntry, entry_or_problem, scalar_text, unreadable
from advisor.formats import has_line
from advisor.formats.quoting import yaml_quote
from advisor.formats.spack import SPACK_PATH_SEPARATOR, _spack_appendable, yaml_child, yaml_root

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "spack-modules"
DESCRIPTION = "Spack modules.yaml: settings in the module environment of their package"
EXTENSION = "yaml"
#: Its shape decides over the suffix, which it shares with ``spack``.
SUFFIXES: tuple[str, ...] = ()
#: Its shape decides over the suffix it shares with the ``spack`` format.
SNIFF_OVER_SUFFIX = True


def sniff(text: str) -> bool:
    """Whether ``text`` is a Spack ``modules.yaml`` (a top-level ``modules:``, and no
    ``spack:`` or ``env_vars:``)."""
    return (has_line(text, "modules:") and not has_line(text, "spack:")
            and not has_line(text, "env_vars:"))

#: The module set written (Spack's default set is named ``default``: ``spack config get
#: modules`` of a fresh Spack).
MODULE_SET = "default"
#: The module kinds written; Spack generates those listed in ``enable`` only.
MODULE_KINDS = ("lmod", "tcl")
#: ``spec_range`` -> how many leading release components of the recorded version a key keeps
#: (None: the version as recorded); Spack's reading of each is in the module docstring.
SPEC_RANGES: dict[str, Optional[int]] = {"exact": None, "minor": 2, "major": 1}
#: Spack's key for every package, which a library record names for settings every program
#: reads (glibc: ``advisor.libraries.glibc``).
EVERY = "all"
#: The bundle package whose module carries the settings every program reads with
#: ``every_program = "separate"`` (packaging/spack/packages/hpc-advisor-tunables).
SEPARATE_PACKAGE = "hpc-advisor-tunables"
#: A recorded version Spack reads as one version (``5.0.2``, ``2024.1``, ``5.0.2-cray``).
_VERSION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
#: The leading release numbers of a version (``5.0.2`` of ``5.0.2-cray``).
_RELEASE = re.compile(r"^[0-9]+(?:\.[0-9]+)*")
#: A key YAML reads as the same plain string unquoted (a package name and version).
_PLAIN_KEY = re.compile(r"^[a-z0-9][a-z0-9_.@-]*$")
#: Characters Spack's module templates or its spec-format tokens would interpret (module
#: docstring).
_UNSAFE = {'"': "a double quote", "\\": "a backslash", "$": "'$'", "[": "'['", "]": "']'",
           "{": "'{'", "}": "'}'"}


def spack_package(library: str, libraries: Mapping[str, Any]) -> str:
    """The Spack package (or ``all``) whose modules get a setting of ``library``: its record's
    ``package("spack")`` (``libraries``: ``Registry.libraries``, as ``Selection.libraries``),
    else the library name."""
    lib = libraries.get(library)
    return (lib.package("spack") if lib is not None else None) or library


def spack_unsafe(value: str) -> Optional[str]:
    """Why Spack's module templates would not write ``value`` unchanged, or None."""
    for ch, what in _UNSAFE.items():
        if ch in value:
            return (f"holds {what}, which Spack's module templates or spec-format tokens "
                    "would interpret")
    return None


def spec_key(library: str, sel: "Selection") -> tuple[str, Optional[str]]:
    """The ``modules.yaml`` key of the settings of ``library`` (module docstring), with why it
    names no version (None when it does, or for :data:`EVERY`).  Example: ``("mpich@5.0", None)``
    for MPICH 5.0.2 and ``spec_range="minor"``; ``("dla-future", "the profile records no
    dla-future version")``.

    :raises EmitError: ``sel.options.spec_range`` is not one of :data:`SPEC_RANGES`.
    """
    pkg = spack_package(library, sel.libraries)
    if pkg == EVERY:
        return EVERY, None
    rng = sel.options.spec_range
    if rng not in SPEC_RANGES:
        raise EmitError(f"spec range {rng!r}: expected one of {', '.join(SPEC_RANGES)}")
    version = version_of(sel.profile.facts, library, sel.libraries)
    if version is None:
        return pkg, f"the profile records no {library} version"
    if not _VERSION.match(version):
        return pkg, f"the profile records {library} {version!r}, which is not a Spack version"
    keep, release = SPEC_RANGES[rng], _RELEASE.match(version)
    if keep is not None and release is not None:
        version = ".".join(release.group(0).split(".")[:keep])
    elif keep is not None:
        return pkg, (f"the profile records {library} {version!r}, which has no release number "
                     f"for --spec-range {rng}")
    return f"{pkg}@{version}", None


def every_program_keys(placement: Any) -> tuple[str, ...]:
    """The keys that get the settings every program reads, for ``every_program`` (``"all"``,
    ``"separate"`` or a sequence of Spack specs).

    :raises EmitError: an empty list, or an item that is not a non-empty string without spaces
        (the configuration's schema refuses Spack's own keys, ``[spack] every_program``).
    """
    if placement in (EVERY, "separate"):
        return (EVERY,) if placement == EVERY else (SEPARATE_PACKAGE,)
    keys = (placement,) if isinstance(placement, str) else tuple(placement)
    bad = [k for k in keys if not isinstance(k, str) or not k or any(c.isspace() for c in k)]
    if not keys or bad:
        raise EmitError(f"[spack] every_program: {bad[0] if bad else '[]'!r} is not a package "
                        "spec a modules.yaml block can name (expected 'all', 'separate' or a "
                        "list such as ['openmpi', 'hpl'])")
    return tuple(dict.fromkeys(keys))


def _keys(item: EnvItem, sel: "Selection") -> list[str]:
    out: set[str] = set()
    for src in item.sources:
        key, _why = spec_key(src.setting.library, sel)
        out.update(every_program_keys(sel.options.every_program) if key == EVERY else (key,))
    return sorted(out)


def notes(sel: "Selection") -> list[tuple[str, str]]:
    """What the user reads on stderr about the keys, as ``(level, text)``: a ``warning`` per
    library whose settings go under a key without a version (:func:`spec_key`)."""
    out: dict[str, str] = {}
    for item in env_items(sel):
        for src in item.sources:
            key, why = spec_key(src.setting.library, sel)
            if why is not None:
                out[key] = (f"{why}: its settings go under the key '{key}', every installed "
                            f"{key}'s module")
    return [("warning", line) for _key, line in sorted(out.items())]


def render(sel: "Selection") -> str:
    """A ``modules.yaml`` with one ``environment`` block per package (module docstring).

    :raises EmitError: a value Spack would not carry unchanged (:func:`spack_unsafe`).
    """
    lines = [f"# {line}" for line in header_lines(sel.profile)]
    lines += left_out_comment(sel, ("env",), fmt=NAME)
    items = env_items(sel)
    refuse_unsafe(items, spack_unsafe, "use the lmod or tcl format for this value")
    by_package: dict[str, list[EnvItem]] = {}
    for item in items:
        for pkg in _keys(item, sel):
            by_package.setdefault(pkg, []).append(item)
    if not by_package:
        lines.append("modules: {}")
        return "\n".join(lines) + "\n"
    unversioned = {key: why for key, why in (spec_key(src.setting.library, sel)
                                             for item in items for src in item.sources) if why}
    lines += [f"# keys: the measured versions (spec range {sel.options.spec_range}); settings "
              f"every program reads: {', '.join(every_program_keys(sel.options.every_program))}",
              "modules:", f"  {MODULE_SET}:"]
    for kind in MODULE_KINDS:
        lines.append(f"    {kind}:")
        for pkg in sorted(by_package, key=lambda p: (p != EVERY, p)):
            if pkg in unversioned and kind == MODULE_KINDS[0]:
                lines.append(f"      # {unversioned[pkg]}: every installed {pkg}")
            plain = _PLAIN_KEY.match(pkg)
            lines += [f"      {pkg if plain else yaml_quote(pkg)}:", "        environment:"]
            group = by_package[pkg]
            sets = [i for i in group if i.separator is None or not _spack_appendable(i)]
            appends = [i for i in group if i.separator is not None and _spack_appendable(i)]
            for section, members in (("set", sets), ("append_path", appends)):
                if not members:
                    continue
                lines.append(f"          {section}:")
                for item in members:
                    if item.comment and kind == MODULE_KINDS[0]:
                        lines.append(f"            # {item.comment}")
                    if item.separator is not None and section == "set":
                        lines.append(f"            # {item.name} is a list "
                                     f"({item.separator!r}-separated) that Spack's "
                                     "append_path cannot merge; this overwrites it")
                    lines.append(f"            {item.name}: {yaml_quote(item.value)}")
    return "\n".join(lines) + "\n"


def parse(text: str, path: str) -> list[EnvEntry]:
    """Every ``environment`` assignment of a ``modules.yaml`` (all module sets, kinds and
    package blocks); ``unset`` and ``remove_path`` assign nothing and are skipped.

    :raises BadInputError: malformed YAML or no ``modules`` mapping (file and line named).
    """
    import yaml

    root = yaml_root(text, path)
    modules = yaml_child(root, "modules")
    if not isinstance(modules, yaml.MappingNode):
        raise BadInputError(f"{path}: YAML file has no 'modules' mapping (Spack modules.yaml)")
    out: list[EnvEntry] = []
    seen: set[tuple[str, str, str]] = set()
    for _set_key, mset in modules.value:
        for kind in MODULE_KINDS:
            for _pkg, block in getattr(yaml_child(mset, kind), "value", None) or []:
                env = yaml_child(block, "environment")
                for action in ("set", "append_path", "prepend_path"):
                    node = yaml_child(env, action)
                    if not isinstance(node, yaml.MappingNode):
                        continue
                    for k, v in node.value:
                        line = k.start_mark.line + 1
                        if not isinstance(v, yaml.ScalarNode):
                            out.append(unreadable(path, line, f"{action}: {k.value}: value is "
                                                  "not a scalar"))
                            continue
                        value = scalar_text(yaml.safe_load(yaml.serialize(v)))
                        key = (action, str(k.value), value)
                        if key in seen:  # the same block under lmod and tcl: one assignment
                            continue
                        seen.add(key)
                        appended = action != "set"
                        entry = entry_or_problem(str(k.value), value, path, line,
                                                 append=appended,
                                                 separator=SPACK_PATH_SEPARATOR if appended
                                                 else None)
                        if action == "prepend_path" and entry.problem is None:
                            entry = dataclasses.replace(entry, prepend=True)
                        out.append(entry)
    return out
