"""``EnvEntry``: one assignment read back from a file, a launch line or the environment.

Every format's ``parse(text, path)`` returns a list of these; ``advisor.lint`` checks them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

#: Portable environment variable names (POSIX.1-2017, XBD chapter 8.1).
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class EnvEntry:
    """One assignment read from a file or the environment.

    ``value`` is None when it is not known statically (a shell expansion).  ``append``: the value
    is items added to an existing list value (``"${N}":item``, ``append-path``).  ``line`` is
    1-based, None for the live environment.  ``launch``: the setting reaches only the command
    on its line.
    """

    name: str
    value: Optional[str]
    path: str
    line: Optional[int]
    exported: bool = True
    append: bool = False
    separator: Optional[str] = None
    problem: Optional[str] = None  # the line could not be read as a setting: why
    prepend: bool = False  # added in front of the existing list value (with ``append``)
    #: passed to one command only (``srun --export=``, ``mpiexec -genv``, ``mpirun -x``,
    #: ``env A=B cmd``, ``A=B cmd``): it is not in the environment of the file's other commands
    launch: bool = False
    #: read from one of advisor's own documents (a profile, ``advisor emit -f toml|json``):
    #: emit's naming rules apply to it (``advisor.specs.names``)
    from_advisor: bool = False


def unreadable(path: str, line: int, why: str) -> EnvEntry:
    """An entry for a line that cannot be read as a setting (``problem`` says why)."""
    return EnvEntry(name="", value=None, path=path, line=line, problem=why)


#: The ``problem`` of the entry an input with nothing in it gives (``nothing_read``).
NOTHING_READ = "the input is empty: nothing was read, so nothing was checked"


def nothing_read(path: str) -> EnvEntry:
    """The one entry of an empty input (lint reports it as ``nothing-read``, not as a clean
    file)."""
    return EnvEntry(name="", value=None, path=path, line=None, problem=NOTHING_READ)


def scalar_text(v: Any) -> str:
    """The environment-variable string of a scalar: ``bool`` -> ``"1"``/``"0"``, else ``str``."""
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def is_scalar(v: Any) -> bool:
    """Whether ``v`` is a value an environment variable can hold (str, int, float, bool)."""
    return isinstance(v, (str, int, float, bool))


def entry_or_problem(name: str, value: Optional[str], path: str, line: Optional[int], *,
                     append: bool = False, separator: Optional[str] = None) -> EnvEntry:
    """An exported entry, or an unreadable one when ``name`` is not a variable name."""
    if not NAME_RE.match(name):
        return unreadable(path, line or 0, f"{name!r} is not an environment variable name")
    return EnvEntry(name, value, path, line, True, append=append, separator=separator)


def python_assignments(text: str, path: str, target: str, what: str) -> list:
    """The top-level ``target = ...`` statements (``ast.Assign``) of Python source ``text``,
    parsed without running anything (the readers of the easybuild-hooks and reframe files).

    :param what: the kind of file, for the error (``EasyBuild hooks``).
    :raises BadInputError: ``text`` is not Python syntax (the line named), or nests deeper
        than CPython's parser reads (``advisor.nesting.parse_python``).
    """
    import ast

    from advisor.nesting import parse_python

    tree = parse_python(text, path, what)
    return [node for node in tree.body if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == target for t in node.targets)]


def literal_dict_entries(node: Any, path: str, what: str, *,
                         unwrap_value: bool = False) -> list[EnvEntry]:
    """The ``NAME: value`` pairs of a dict literal (``ast.Dict``) as entries, read with
    ``ast.literal_eval`` (nothing runs); a pair that is not literal, or not a string name with a
    scalar value, is an unreadable entry naming ``what`` (``modextravars``, ``SETTINGS``).

    :param unwrap_value: a value ``{"value": v, ...}`` stands for ``v`` (EasyBuild's
        modextravars allows that form).
    """
    import ast

    out: list[EnvEntry] = []
    for k, v in zip(node.keys, node.values):
        line = (k or v).lineno
        try:
            name, value = ast.literal_eval(k), ast.literal_eval(v)
        except (ValueError, TypeError, SyntaxError):
            out.append(unreadable(path, line, f"{what} entry is not a literal"))
            continue
        if unwrap_value and isinstance(value, dict):
            value = value.get("value")
        if not isinstance(name, str) or not is_scalar(value):
            out.append(unreadable(path, line, f"{what} entry is not NAME: value"))
            continue
        out.append(entry_or_problem(name, scalar_text(value), path, line))
    return out
