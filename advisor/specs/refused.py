"""The names ``advisor emit`` never writes, derived consumer by consumer (issue 28, part 5).

An emitted file is read by a shell, a module tool or a program's runtime.  Each of those
*consumers* documents environment variables it reads as code to run, a command to start, a
file or directory of code to load, or a file to write.  One table per consumer below lists them,
each with the reason and the documentation that says so; ``prefixes`` are families a consumer
documents as a whole (every ``LD_*`` is ld.so's, every ``LMOD_*`` Lmod's configuration).  A
name is refused when any consumer lists it: the file may be sourced by any of them, and the
same environment reaches every program started from it.  :mod:`advisor.specs.names` derives
its public ``REFUSED``/``REFUSED_PREFIXES`` from :data:`CONSUMERS`.

How a table is decided: a name is listed when the consumer, as documented, (a) runs its value
(``PROMPT_COMMAND``, ``EDITOR``), (b) expands it with command substitution (``PS1``), (c) loads
code or start-up files from a path it names (``ZDOTDIR``, ``LMOD_PACKAGE_PATH``,
``PYTHONPATH``), (d) takes options that load code (``NODE_OPTIONS``, ``JAVA_TOOL_OPTIONS``) or
(e) writes a file it names (``HISTFILE``).  Values that are plain numbers or words of the
product (``GLIBC_TUNABLES`` items, ``MALLOC_ARENA_MAX``) are not listed; see
:mod:`advisor.specs.names`.

Decisions worth knowing.  zsh's ``precmd``/``preexec`` and tcsh's ``precmd``, ``cwdcmd`` and
``periodic`` hooks are functions and aliases, and tcsh's ``prompt`` a shell variable: no
environment variable sets them, so those tables list what the shells do import (``ZDOTDIR``,
``HOME``: the start-up files that could define such hooks).  ``MODULEPATH`` is refused: a module
file is a program (Lua for Lmod, Tcl for Environment Modules) and ``MODULEPATH`` chooses which
one ``module load NAME`` runs.  The ``LMOD_*`` and ``MODULES_*`` families are refused whole:
each tool documents them as its configuration, several run code (``LMOD_PACKAGE_PATH``,
``MODULES_SITECONFIG``, ...), and no setting this tool advises is among them.

``tests/emit/test_refused_consumers.py`` checks each table against its real consumer: one
name per table, written by hand into a file of the consumer's format, runs a marker command
there, and ``advisor emit`` refuses the same name when a plugin declares it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

__all__ = ["Consumer", "CONSUMERS"]

#: (why it is refused, where that is documented)
Entry = tuple[str, str]


@dataclass(frozen=True)
class Consumer:
    """One program that reads emitted files or the environment they set.

    :param name: short name (``bash``, ``lmod``), unique.
    :param kind: ``shell``, ``module tool``, ``loader``, ``runtime`` or ``tool``.
    :param names: name -> (why, documentation reference).
    :param prefixes: prefix -> (why, documentation reference): every name with the prefix.
    """

    name: str
    kind: str
    names: Mapping[str, Entry] = field(default_factory=dict)
    prefixes: Mapping[str, Entry] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", MappingProxyType(dict(self.names)))
        object.__setattr__(self, "prefixes", MappingProxyType(dict(self.prefixes)))


_POSIX = "POSIX.1-2017 XCU 2.5.3 Shell Variables"
_DASH = "dash(1), Environment; " + _POSIX
_BASH = "bash(1), Shell Variables"
_ZSH = "zshparam(1), Parameters Used By The Shell"
_ZSTART = "zsh(1), Startup/Shutdown Files"
_FISH = "fish documentation, language.html, Special variables"
_FISHCONF = "fish documentation, language.html, Configuration files"
_TCSH = "tcsh(1), Environment and Startup and shutdown"
_LMOD = ("Lmod documentation, \"Controlling Lmod behavior through Environment Variables\" "
         "and \"SitePackage.lua and Hooks\" (LMOD_PACKAGE_PATH)")
_MODULES = "module(1) (Environment Modules 5), ENVIRONMENT"
_LDSO = "ld.so(8), Environment"
_UNSECVARS = ("glibc sysdeps/generic/unsecvars.h (variables ld.so removes for set-user-ID "
              "programs because they name files or code)")
_PY = "python(1), Environment variables"

SH = Consumer("sh", "shell", {
    "ENV": ("an interactive sh sources the file it names at start", _DASH),
    "PS1": ("prompt string: expanded, command substitution included (dash), before each "
            "command is read", _DASH),
    "PS2": ("continuation prompt, expanded like PS1", _DASH),
    "PS4": ("expanded (command substitution included) before each traced command", _DASH),
    "PATH": ("the search path for commands", _POSIX),
    "CDPATH": ("the search path of cd", _POSIX),
    "IFS": ("changes how the shell splits every later command into words", _POSIX),
    "HOME": ("the directory ~ expands to and cd goes to; shells read start-up files from it",
             _POSIX),
    "MAIL": ("a file the interactive shell watches", _POSIX),
    "MAILPATH": ("files the interactive shell watches, with messages it expands", _POSIX),
})

BASH = Consumer("bash", "shell", {
    "PROMPT_COMMAND": ("bash runs its value as a command before each prompt", _BASH),
    "PS1": ("prompt, expanded (command substitution included, promptvars) before each "
            "command is read", "bash(1), PROMPTING"),
    "PS2": ("continuation prompt, expanded like PS1", "bash(1), PROMPTING"),
    "PS4": ("expanded like PS1 before each traced command (set -x)", _BASH),
    "ENV": ("bash in POSIX mode sources the file it names when interactive",
            "bash(1), INVOCATION"),
    "HOME": ("bash sources ~/.bashrc and ~/.bash_profile from it", "bash(1), INVOCATION"),
    "PS0": ("expanded (command substitution included) before each command runs", _BASH),
    "BASH_ENV": ("bash sources the file it names when a script starts", _BASH),
    "SHELLOPTS": ("bash turns on the shell options it lists at start", _BASH),
    "BASHOPTS": ("bash turns on the shopt options it lists at start", _BASH),
    "GLOBIGNORE": ("changes which files pathname expansion yields", _BASH),
    "EXECIGNORE": ("changes which files the command search accepts", _BASH),
    "HISTFILE": ("the file the shell writes its history to (a start-up file, say)", _BASH),
    "INPUTRC": ("readline's start-up file: key bindings and macros that type commands",
                "bash(1), READLINE; readline(3), Initialization File"),
    "BASH_LOADABLES_PATH": ("enable -f loads shared objects (builtins) from it", _BASH),
    "FCEDIT": ("the editor fc runs", "bash(1), SHELL BUILTIN COMMANDS, fc"),
}, {
    "BASH_FUNC_": ("bash imports shell functions (code) from variables named "
                   "BASH_FUNC_name%%", "bash(1), FUNCTIONS (export -f)"),
})

ZSH = Consumer("zsh", "shell", {
    "ZDOTDIR": ("zsh sources .zshenv, .zshrc, ... from the directory it names", _ZSTART),
    "HOME": ("zsh sources its start-up files from it when ZDOTDIR is unset", _ZSTART),
    "PS1": ("prompt, expanded (command substitution with PROMPT_SUBST)", _ZSH),
    "PS4": ("expanded like PS1 before each traced command", _ZSH),
    "FPATH": ("zsh (and ksh) autoload functions (code) from the directories it names", _ZSH),
    "PROMPT": ("prompt, expanded (command substitution with PROMPT_SUBST)", _ZSH),
    "RPROMPT": ("right prompt, expanded like PROMPT", _ZSH),
    "RPS1": ("right prompt, expanded like PROMPT", _ZSH),
    "RPROMPT2": ("right continuation prompt, expanded like PROMPT", _ZSH),
    "RPS2": ("right continuation prompt, expanded like PROMPT", _ZSH),
    "SPROMPT": ("the correction prompt, expanded like PROMPT", _ZSH),
    "STTY": ("zsh runs 'stty ' followed by its value as shell code before a command it "
             "is in the environment of", _ZSH),
    "TMPPREFIX": ("where zsh writes temporary files", _ZSH),
})

FISH = Consumer("fish", "shell", {
    "XDG_CONFIG_HOME": ("fish sources fish/config.fish and fish/conf.d/*.fish under it and "
                        "autoloads functions from fish/functions", _FISHCONF),
    "XDG_DATA_DIRS": ("fish sources fish/vendor_conf.d/*.fish and autoloads "
                      "fish/vendor_functions.d under each directory", _FISHCONF),
    "XDG_DATA_HOME": ("fish's data directory (completions it loads, universal variables)",
                      _FISHCONF),
}, {
    "fish_": ("fish's own configuration variables: fish_function_path and "
              "fish_complete_path name directories fish autoloads code from", _FISH),
    "__fish_": ("fish's internal variables (its configuration and data directories)",
                "fish share/config.fish"),
})

TCSH = Consumer("tcsh", "shell", {
    "HOME": ("tcsh sources ~/.tcshrc (or ~/.cshrc) from it, in every shell without -f", _TCSH),
    "HPATH": ("directories the run-help editor command searches", _TCSH),
})

LMOD = Consumer("lmod", "module tool", {
    "MODULEPATH": ("the directories module files (Lua or Tcl programs) are loaded from",
                   _LMOD + "; module(1)"),
    "MODULEPATH_ROOT": ("the root of Lmod's default module directories", _LMOD),
    "MODULESHOME": ("where shells' module init scripts are sourced from", _LMOD + "; module(1)"),
    "LOADEDMODULES": ("the module tool's record of loaded modules, which unload reruns",
                      _LMOD + "; module(1)"),
    "_LMFILES_": ("the module files of the loaded modules, which unload reruns",
                  _LMOD + "; module(1)"),
}, {
    "LMOD_": ("Lmod's configuration: LMOD_PACKAGE_PATH (SitePackage.lua, run by every module "
              "command), LMOD_RC and LMOD_CONFIG_DIR (Lua files it runs), LMOD_CMD and "
              "LMOD_SETTARG_CMD (commands the module shell function runs), LMOD_PAGER", _LMOD),
    "__LMOD_": ("Lmod's record of loaded modules (reference counts, stacks)", _LMOD),
    "_ModuleTable": ("Lmod's saved module table: Lua source Lmod loads on each command",
                     "Lmod source, src/MT.lua (_ModuleTable_ environment variables)"),
})

ENV_MODULES = Consumer("environment-modules", "module tool", {
    "MODULEPATH": ("the directories module files (Tcl programs) are loaded from", _MODULES),
    "MODULERCFILE": ("a global rc file (Tcl) modulecmd evaluates on each command", _MODULES),
    "MODULESHOME": ("where shells' module init scripts are sourced from", _MODULES),
    "LOADEDMODULES": ("the record of loaded modules, which unload and refresh rerun",
                      _MODULES),
    "_LMFILES_": ("the module files of the loaded modules, rerun on unload", _MODULES),
}, {
    "MODULES_": ("Environment Modules' configuration: MODULES_SITECONFIG (a Tcl file sourced "
                 "by every modulecmd run), MODULES_CMD (the command the module function "
                 "runs), MODULES_PAGER and MODULES_EDITOR (commands it starts), "
                 "MODULES_RUNENV_* (the environment it runs with)", _MODULES),
    "__MODULES_": ("Environment Modules' record of loaded modules (prerequisites, source-sh "
                   "scripts, quarantined variables)", _MODULES),
})

LOADER = Consumer("ld.so", "loader", {}, {
    "LD_": ("the dynamic loader reads these: objects to load first (LD_PRELOAD), audit "
            "libraries (LD_AUDIT), search paths (LD_LIBRARY_PATH), output files (LD_DEBUG_OUTPUT)"
            ", or it lists the libraries instead of running the program "
            "(LD_TRACE_LOADED_OBJECTS)", _LDSO),
})

GLIBC = Consumer("glibc", "loader", {
    "GCONV_PATH": ("iconv loads conversion modules (shared objects) from it", _UNSECVARS),
    "GETCONF_DIR": ("the directory getconf runs its per-environment programs from",
                    _UNSECVARS),
    "LOCPATH": ("the directory glibc loads locale data from", _UNSECVARS),
    "NLSPATH": ("the path catopen(3) reads message catalogues from", _UNSECVARS),
    "HOSTALIASES": ("a file the resolver reads", _UNSECVARS),
    "RESOLV_HOST_CONF": ("a file the resolver reads", _UNSECVARS),
    "LOCALDOMAIN": ("the resolver's search domains (which hosts names resolve to)",
                    _UNSECVARS + "; resolv.conf(5)"),
    "RES_OPTIONS": ("the resolver's options", _UNSECVARS + "; resolv.conf(5)"),
    "NIS_PATH": ("the NIS+ search path", _UNSECVARS),
    "TMPDIR": ("the directory programs create temporary files in", _UNSECVARS),
    "TZDIR": ("the directory time-zone files are read from", _UNSECVARS),
    "MALLOC_TRACE": ("the file mtrace(3) writes its log to", _UNSECVARS + "; mtrace(3)"),
})

LUA = Consumer("lua", "runtime", {}, {
    "LUA_INIT": ("lua runs its value (code, or @file) before the script; also LUA_INIT_5_x",
                 "lua(1), ENVIRONMENT VARIABLES; Lua 5.3 manual 7"),
    "LUA_PATH": ("where require finds Lua modules (code); also LUA_PATH_5_x; Lmod is a Lua "
                 "program", "Lua 5.3 manual 6.3, package.path"),
    "LUA_CPATH": ("where require finds C modules (shared objects); also LUA_CPATH_5_x",
                  "Lua 5.3 manual 6.3, package.cpath"),
})

TCL = Consumer("tcl", "runtime", {
    "TCLLIBPATH": ("directories package require loads Tcl packages (code) from",
                   "tclvars(n), env(TCLLIBPATH)"),
    "TCL_LIBRARY": ("the directory tclsh sources init.tcl from at start (modulecmd.tcl runs "
                    "in tclsh)", "tclvars(n), env(TCL_LIBRARY)"),
    "TK_LIBRARY": ("the directory wish sources tk.tcl from at start", "tkvars(n), tk_library"),
})

JAVA = Consumer("java", "runtime", {
    "JAVA_TOOL_OPTIONS": ("options every JVM applies (-javaagent: code)",
                          "JVM Tool Interface specification, Command-Line Option"),
    "_JAVA_OPTIONS": ("options the HotSpot JVM applies, as JAVA_TOOL_OPTIONS",
                      "OpenJDK src/hotspot/share/runtime/arguments.cpp (_JAVA_OPTIONS)"),
    "JDK_JAVA_OPTIONS": ("options the java launcher prepends (-javaagent: code)",
                         "java(1), Using the JDK_JAVA_OPTIONS Launcher Environment Variable"),
    "CLASSPATH": ("where the JVM finds classes (code)", "java(1), --class-path"),
})

PERL = Consumer("perl", "runtime", {
    "PERL5OPT": ("command-line options (-M modules, -d debugger: code) perl applies",
                 "perlrun(1), ENVIRONMENT"),
    "PERL5LIB": ("perl's module search path", "perlrun(1), ENVIRONMENT"),
    "PERLLIB": ("perl's module search path", "perlrun(1), ENVIRONMENT"),
    "PERL5DB": ("code of the perl debugger, run under -d", "perlrun(1), ENVIRONMENT"),
})

PYTHON = Consumer("python", "runtime", {
    "PYTHONPATH": ("module search path: Python imports (runs) code from it, sitecustomize "
                   "at every start", _PY),
    "PYTHONHOME": ("the directory of the standard library Python runs", _PY),
    "PYTHONSTARTUP": ("a file of code the interactive interpreter runs", _PY),
    "PYTHONUSERBASE": ("a directory on the module search path", _PY),
    "PYTHONBREAKPOINT": ("names a callable that breakpoint() imports and runs", _PY),
    "PYTHONWARNINGS": ("warning filters whose categories Python imports (runs a module) at "
                       "start", _PY + "; warnings module, Describing Warning Filters"),
    "PYTHONINSPECT": ("enters the interactive interpreter after the script", _PY),
    "PYTHONPYCACHEPREFIX": ("where Python writes and reads compiled code", _PY),
    "PYTHONPLATLIBDIR": ("the library directory name Python searches", _PY),
})

RUBY = Consumer("ruby", "runtime", {
    "RUBYOPT": ("command-line options (-r libraries: code) ruby applies", "ruby(1)"),
    "RUBYLIB": ("ruby's library search path", "ruby(1)"),
    "RUBYSHELL": ("the shell ruby runs commands with", "ruby(1)"),
    "RUBYPATH": ("where ruby -S finds scripts", "ruby(1)"),
})

NODE = Consumer("node", "runtime", {
    "NODE_OPTIONS": ("command-line options (--require, --import: code) node applies",
                     "Node.js CLI documentation, NODE_OPTIONS"),
    "NODE_PATH": ("node's module search path", "Node.js modules documentation, NODE_PATH"),
    "NODE_REPL_EXTERNAL_MODULE": ("a module node runs instead of its REPL",
                                  "Node.js CLI documentation"),
})

TOOLS = Consumer("tools", "tool", {
    "EDITOR": ("git, crontab, less, mail ... run it to edit a file", "environ(7); git-var(1)"),
    "VISUAL": ("programs run it to edit a file, before EDITOR", "environ(7); git-var(1)"),
    "PAGER": ("man, git, less' v command ... run it to show text", "environ(7); man(1)"),
    "MANPAGER": ("man runs it to show a page", "man(1), ENVIRONMENT"),
    "BROWSER": ("programs run it to open a URL", "environ(7)"),
    "SHELL": ("the shell programs (make, vi, script, ssh) run commands with", "environ(7)"),
    "LESSOPEN": ("less runs it as an input preprocessor", "less(1), INPUT PREPROCESSOR"),
    "LESSCLOSE": ("less runs it as an input postprocessor", "less(1), INPUT PREPROCESSOR"),
    "LESSKEY": ("the key-binding file less reads", "less(1), ENVIRONMENT VARIABLES"),
    "SSH_ASKPASS": ("ssh and ssh-add run it to ask for a passphrase", "ssh(1), ENVIRONMENT"),
    "SUDO_ASKPASS": ("sudo -A runs it to ask for a password", "sudo(8), ENVIRONMENT"),
}, {
    "GIT_": ("git's environment: GIT_EDITOR, GIT_PAGER, GIT_SSH_COMMAND, GIT_ASKPASS, "
             "GIT_EXTERNAL_DIFF (commands it runs), GIT_CONFIG_* (any setting, core.hooksPath "
             "included), GIT_EXEC_PATH (its programs)", "git(1), ENVIRONMENT VARIABLES"),
})

#: every consumer's table, in the order refusals name them
CONSUMERS: tuple[Consumer, ...] = (SH, BASH, ZSH, FISH, TCSH, LMOD, ENV_MODULES, LOADER, GLIBC,
                                   LUA, TCL, JAVA, PERL, PYTHON, RUBY, NODE, TOOLS)
