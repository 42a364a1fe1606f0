"""Names ``advisor emit`` never writes, and the rule that it writes only declared names.

A profile is data from a probe run (possibly another machine's, possibly edited).  Whatever it
holds, an emitted file must not hand a shell, the dynamic loader or a language runtime code to
run or a path to search: those names are refused in every format (:data:`REFUSED`,
:data:`REFUSED_PREFIXES`), each with the reason and where the behaviour is documented.
Every other name is written only when a registered knob declares it (:func:`declared_names`).

Names deliberately *not* refused: ``GLIBC_TUNABLES`` (a product setting the host-buffer plugin
recommends; its items are checked against knob records one by one) and the ``MALLOC_*``
variables other than ``MALLOC_TRACE`` (``MALLOC_ARENA_MAX``, ``MALLOC_TOP_PAD_``, ... are the
older spellings of glibc malloc tunables: numbers, neither code nor paths; glibc manual,
"Memory Allocation Tunables").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.models import Setting

_BASH = "bash(1), Shell Variables"
_POSIX_SH = "POSIX.1-2017 XCU 2.5.3 Shell Variables"
_LDSO = "ld.so(8), Environment"
_UNSECVARS = ("glibc sysdeps/generic/unsecvars.h (variables ld.so removes for set-user-ID "
              "programs because they name files or code)")
_PYTHON = "python(1), Environment variables"

#: name -> (why it is refused, where that is documented)
REFUSED: dict[str, tuple[str, str]] = {
    "PROMPT_COMMAND": ("bash runs its value as a command before each prompt", _BASH),
    "BASH_ENV": ("bash sources the file it names when a script starts", _BASH),
    "ENV": ("sh and bash in POSIX mode source the file it names at start", _POSIX_SH),
    "PATH": ("the search path for commands", _POSIX_SH),
    "CDPATH": ("the search path of cd", _POSIX_SH),
    "IFS": ("changes how the shell splits every later command into words", _POSIX_SH),
    "PS1": ("prompt string, expanded (command substitution included) by the shell", _POSIX_SH),
    "PS2": ("prompt string, expanded by the shell", _POSIX_SH),
    "PS4": ("expanded (command substitution included) before each traced command", _POSIX_SH),
    "SHELLOPTS": ("bash turns on the shell options it lists at start", _BASH),
    "BASHOPTS": ("bash turns on the shopt options it lists at start", _BASH),
    "GLOBIGNORE": ("changes which files pathname expansion yields", _BASH),
    "HOME": ("the directory ~ expands to and cd goes to", _POSIX_SH),
    "FPATH": ("zsh and ksh load functions (code) from the directories it names",
              "zshparam(1), FPATH; ksh(1)"),
    "ZDOTDIR": ("zsh sources its start-up files from the directory it names",
                "zsh(1), STARTUP/SHUTDOWN FILES"),
    "GCONV_PATH": ("iconv loads conversion modules (shared objects) from it", _UNSECVARS),
    "LOCPATH": ("the directory glibc loads locale data from", _UNSECVARS),
    "NLSPATH": ("the path catopen(3) reads message catalogues from", _UNSECVARS),
    "HOSTALIASES": ("a file the resolver reads", _UNSECVARS),
    "RESOLV_HOST_CONF": ("a file the resolver reads", _UNSECVARS),
    "TMPDIR": ("the directory programs create temporary files in", _UNSECVARS),
    "TZDIR": ("the directory time-zone files are read from", _UNSECVARS),
    "MALLOC_TRACE": ("the file mtrace(3) writes its log to", _UNSECVARS + "; mtrace(3)"),
    "PYTHONPATH": ("module search path: Python imports (runs) code from it", _PYTHON),
    "PYTHONHOME": ("the directory of the standard library Python runs", _PYTHON),
    "PYTHONSTARTUP": ("a file of code the interactive interpreter runs", _PYTHON),
    "PYTHONUSERBASE": ("a directory on the module search path", _PYTHON),
    "PYTHONBREAKPOINT": ("names a callable that breakpoint() imports and runs", _PYTHON),
    "PERL5OPT": ("command-line options (-M modules: code) perl applies", "perlrun(1)"),
    "PERL5LIB": ("perl's module search path", "perlrun(1)"),
    "PERLLIB": ("perl's module search path", "perlrun(1)"),
    "PERL5DB": ("code of the perl debugger", "perlrun(1)"),
    "RUBYOPT": ("command-line options (-r libraries: code) ruby applies", "ruby(1)"),
    "RUBYLIB": ("ruby's library search path", "ruby(1)"),
    "NODE_OPTIONS": ("command-line options (--require: code) node applies",
                     "Node.js CLI documentation, NODE_OPTIONS"),
    "NODE_PATH": ("node's module search path", "Node.js modules documentation, NODE_PATH"),
}

#: prefix -> (why, source): every name with the prefix is refused.
REFUSED_PREFIXES: dict[str, tuple[str, str]] = {
    "LD_": ("the dynamic loader reads these: objects to load first (LD_PRELOAD), audit "
            "libraries (LD_AUDIT), search paths (LD_LIBRARY_PATH), output files (LD_DEBUG_OUTPUT)"
            ", or it lists the libraries instead of running the program "
            "(LD_TRACE_LOADED_OBJECTS)", _LDSO),
}


def refused_reason(name: str) -> Optional[str]:
    """Why ``name`` is never emitted (reason and source in one phrase), or None."""
    hit = REFUSED.get(name)
    if hit is None:
        hit = next((v for p, v in REFUSED_PREFIXES.items() if name.startswith(p)), None)
    if hit is None:
        return None
    why, source = hit
    return f"{why} ({source})"


def declared_names(knobs: Iterable["Knob"]) -> frozenset[str]:
    """Every name a knob record declares: ``Knob.name`` and each of ``Knob.aliases``."""
    out: set[str] = set()
    for k in knobs:
        out.add(k.name)
        out.update(k.aliases)
    return frozenset(out)


def undeclared(setting: "Setting", declared: frozenset[str]) -> list[str]:
    """The names in ``setting`` that no knob declares: the setting's name and, for a list
    variable (``separator`` set, e.g. ``GLIBC_TUNABLES``), the name of each ``name=value`` item
    (glibc reads ``GLIBC_TUNABLES`` as ``tunable=value`` items; glibc manual, "Tunables")."""
    return undeclared_in(setting.name, setting.value if isinstance(setting.value, str) else None,
                         setting.separator, declared)


def undeclared_in(name: str, value: Optional[str], separator: Optional[str],
                  declared: frozenset[str]) -> list[str]:
    """``undeclared`` for a name, value and list separator read back from a file (lint)."""
    out = [] if name in declared else [name]
    if separator and value:
        for item in value.split(separator):
            iname, eq, _ = item.partition("=")
            if item and eq and iname not in declared:
                out.append(iname)
    return out
