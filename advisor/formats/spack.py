"""Spack environments (format ``spack``): an ``env_vars.yaml`` include file.

An ``env_vars.yaml`` include file for a Spack environment, as documented in
https://spack.readthedocs.io/en/latest/env_vars_yaml.html ("Environment Variable Settings
(env_vars.yaml)"): a top-level ``env_vars:`` mapping with the sections ``set``, ``unset``,
``prepend_path``, ``append_path`` and ``remove_path``; each of ``set`` / ``*_path`` maps a
variable name to a string or number (schema: ``lib/spack/spack/schema/environment.py``,
``env_modifications``).  Use it from ``spack.yaml`` with ``include: [advisor-env.yaml]``, or
paste the ``env_vars`` mapping under ``spack:``.  Spack applies the changes on
``spack env activate``.

List variables go to ``append_path``, which appends to an existing value with ``:`` and sets
the variable when it is empty.  The YAML schema has no separator field (``:``,
``os.pathsep``, is always used) and Spack passes each appended value through
``os.path.normpath`` (``spack.util.environment.AppendPath``), so a list whose separator is
not ``:`` or whose items ``normpath`` would change is written under ``set`` (overwriting,
with a comment saying so).

``parse`` reads an ``env_vars.yaml`` (or a ``spack.yaml`` with ``spack: env_vars:``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import TYPE_CHECKING, Any

from advisor.errors import BadInputError
from advisor.specs.writing import EnvItem, env_items, header_lines, left_out_comment
from advisor.specs.entry import EnvEntry, entry_or_problem, scalar_text, unreadable
from advisor.formats.quoting import yaml_quote

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "spack"
DESCRIPTION = "Spack environment env_vars.yaml (include from spack.yaml)"
EXTENSION = "yaml"

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".yaml", ".yml")
#: ``parse`` refuses what it cannot read: an empty result truly sets nothing.
STRUCTURED = True


def sniff(text: str) -> bool:
    """Whether ``text`` is a Spack environment snippet (a top-level ``spack:`` or
    ``env_vars:``)."""
    return re.search(r"^(spack|env_vars):", text, re.M) is not None

#: The only list separator Spack's env_vars ``append_path`` uses (``os.pathsep`` on POSIX).
SPACK_PATH_SEPARATOR = ":"


def _spack_appendable(item: EnvItem) -> bool:
    if item.separator != SPACK_PATH_SEPARATOR:
        return False
    return all(os.path.normpath(part) == part for part in item.value.split(item.separator))


def render(sel: "Selection") -> str:
    """A Spack ``env_vars.yaml`` include file (see the module docstring)."""
    lines = [f"# {line}" for line in header_lines(sel.profile)]
    lines += left_out_comment(sel, ("env",), "#", fmt=NAME)
    items = env_items(sel)
    sets = [i for i in items if i.separator is None or not _spack_appendable(i)]
    appends = [i for i in items if i.separator is not None and _spack_appendable(i)]
    lines.append("env_vars:")
    if not items:
        lines[-1] = "env_vars: {}"
    for section, group in (("set", sets), ("append_path", appends)):
        if not group:
            continue
        lines.append(f"  {section}:")
        for item in group:
            if item.comment:
                lines.append(f"    # {item.comment}")
            if item.separator is not None and section == "set":
                lines.append(f"    # {item.name} is a list ({item.separator!r}-separated) that "
                             "Spack's append_path cannot merge; this overwrites it")
            lines.append(f"    {item.name}: {yaml_quote(item.value)}")
    return "\n".join(lines) + "\n"


def yaml_root(text: str, path: str) -> Any:
    """The node tree of YAML ``text`` (``yaml.compose``: marks kept for line numbers), its
    depth and alias expansion bounded first (``advisor.nesting.compose_yaml``).

    :raises BadInputError: malformed YAML (file and line named), too deep, too many aliases.
    """
    from advisor.nesting import compose_yaml

    return compose_yaml(text, path)


def yaml_child(node: Any, key: str) -> Any:
    """The value node of ``key`` in mapping node ``node``, or None."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def parse(text: str, path: str) -> list[EnvEntry]:
    """A Spack ``env_vars.yaml`` (or a ``spack.yaml`` with ``spack: env_vars:``).  ``set`` is an
    assignment, ``append_path``/``prepend_path`` add one item; ``unset`` and ``remove_path``
    assign nothing and are skipped."""
    import yaml

    root = yaml_root(text, path)
    section = yaml_child(root, "env_vars") or yaml_child(yaml_child(root, "spack"), "env_vars")
    if section is None:
        raise BadInputError(f"{path}: YAML file has no 'env_vars' (Spack environment) mapping")
    if not isinstance(section, yaml.MappingNode):
        raise BadInputError(f"{path}:{section.start_mark.line + 1}: key 'env_vars': must be a "
                            "mapping of actions (set, append_path, ...)")
    out: list[EnvEntry] = []
    for action in ("set", "append_path", "prepend_path"):
        node = yaml_child(section, action)
        if node is None:
            continue
        if not isinstance(node, yaml.MappingNode):
            raise BadInputError(f"{path}:{node.start_mark.line + 1}: key 'env_vars.{action}': "
                                "must be a mapping of variable names to values")
        for k, v in node.value:
            line = k.start_mark.line + 1
            if not isinstance(v, yaml.ScalarNode):
                out.append(unreadable(path, line, f"{action}: {k.value}: value is not a scalar"))
                continue
            value = yaml.safe_load(yaml.serialize(v))
            appended = action != "set"
            entry = entry_or_problem(str(k.value), scalar_text(value), path, line,
                                      append=appended,
                                      separator=SPACK_PATH_SEPARATOR if appended else None)
            if action == "prepend_path" and entry.problem is None:
                entry = dataclasses.replace(entry, prepend=True)
            out.append(entry)
    return out
