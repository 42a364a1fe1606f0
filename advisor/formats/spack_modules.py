"""Spack ``modules.yaml`` (format ``spack-modules``): each setting in the ``environment`` block of
the module of the package that reads it.

Shape (Spack's own schema, ``spack.schema.modules``; the dump in
tests/data/spack/modules-schema.json is checked against every emitted file)::

    modules:
      default:              # the module set Spack configures out of the box
        lmod:
          mpich:            # a spec: the modules of every installed mpich
            environment:
              set: {MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD: "16384"}
        tcl: {...}          # the same blocks again: Spack writes only the enabled kinds

Where a setting goes (``Setting.library`` -> Spack package): the package the library's record
names (``Library.package("spack")``: ``mpich``, ``openmpi``, ``ucx``, ``dla-future``,
``py-cupy``; ``all`` for glibc, the system C library every program loads, so every module Spack
writes carries its tunables); a library without a record or without a Spack name: the library
name itself (``umpire``: Spack's package of that name).  Include the file
as a configuration scope or merge it into the site's ``modules.yaml``; then ``spack module
lmod refresh`` (or ``tcl``) regenerates the modules.

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
from typing import TYPE_CHECKING, Any, Mapping, Optional

from advisor.errors import BadInputError
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


def _packages(item: EnvItem, libraries: Mapping[str, Any]) -> list[str]:
    return sorted({spack_package(src.setting.library, libraries) for src in item.sources})


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
        for pkg in _packages(item, sel.libraries):
            by_package.setdefault(pkg, []).append(item)
    if not by_package:
        lines.append("modules: {}")
        return "\n".join(lines) + "\n"
    lines += ["modules:", f"  {MODULE_SET}:"]
    for kind in MODULE_KINDS:
        lines.append(f"    {kind}:")
        for pkg in sorted(by_package, key=lambda p: (p != "all", p)):
            lines += [f"      {pkg}:", "        environment:"]
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
