"""One code-running name per consumer of ``advisor.specs.refused``, with what it takes to show
the danger in the real consumer: the files the value points at, the format a hand-written file
of the assignment is in, and the shell script that loads that file and then starts the
consumer.  Each planted payload touches ``<dir>/MARKER``; ``{d}`` in a value, a file or a
script stands for the test's directory.

Used by tests/emit/test_refused_consumers.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest

from advisor.formats.quoting import csh_quote, fish_quote, lua_quote, sh_quote, tcl_quote
from consumers import lmod_init, modules_init

#: format -> (file name, one assignment as that format writes it by hand)
ASSIGN: dict[str, tuple[str, Callable[[str, str], str]]] = {
    "env": ("site.sh", lambda n, v: f"export {n}={sh_quote(v)}\n"),
    "fish": ("site.fish", lambda n, v: f"set -gx {n} {fish_quote(v)}\n"),
    "csh": ("site.csh", lambda n, v: f"setenv {n} {csh_quote(v)}\n"),
    "lmod": ("mod/advisor.lua", lambda n, v: f"setenv({lua_quote(n)}, {lua_quote(v)})\n"),
    "tcl": ("mod/advisor", lambda n, v: f"#%Module1.0\nsetenv {n} {tcl_quote(v)}\n"),
}

_SO = r"""#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) { close(open("{d}/MARKER", O_CREAT | O_WRONLY, 0600)); }
int gconv_init(void *step) { return 1; }
int gconv(void) { return 1; }
void gconv_end(void *step) {}
"""
_AGENT = """public class Agent {
    public static void premain(String args) throws Exception {
        new java.io.File("{d}/MARKER").createNewFile();
    }
}
"""


def _cc(d: Path, out: str) -> None:
    """Build the constructor-only shared object (a gconv module too) with the system C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler here (Debian gcc; CI installs it)")
    src = d / "evil.c"
    src.write_text(_SO.replace("{d}", str(d)))
    (d / out).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(d / out), str(src)], check=True,
                   timeout=120)


def _java_agent(d: Path) -> None:
    """A java agent (its premain touches the marker): javac, then the jar written with zipfile."""
    javac = shutil.which("javac")
    if javac is None or shutil.which("java") is None:
        pytest.skip("no JDK here (java and javac)")
    (d / "Agent.java").write_text(_AGENT.replace("{d}", str(d)))
    subprocess.run([javac, "-d", str(d), str(d / "Agent.java")], check=True, timeout=300)
    with zipfile.ZipFile(d / "agent.jar", "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nPremain-Class: Agent\n\n")
        jar.write(d / "Agent.class", "Agent.class")


@dataclass(frozen=True)
class Control:
    """One consumer's code-running name and how the real consumer is shown to run it.

    :param consumer: ``advisor.specs.refused.Consumer.name``.
    :param name: the variable; ``value`` its value.
    :param fmt: the emit format whose file the consumer loads (``ASSIGN``).
    :param script: bash (``argv`` given) or the shell's own code that loads the file ``{f}``
        and then starts the consumer.
    :param argv: the interpreter of ``script``.
    :param files: files the value points at (path under ``{d}`` -> text).
    :param tools: commands the control needs (skipped with the reason when absent).
    :param build: builds binary payloads into ``{d}``.
    :param init: returns the shell code that defines ``module`` (``{init}`` in ``script``).
    """

    consumer: str
    name: str
    value: str
    fmt: str
    script: str
    argv: tuple[str, ...] = ("bash", "--norc", "--noprofile", "-c")
    files: dict[str, str] = field(default_factory=dict)
    tools: tuple[str, ...] = ()
    build: Optional[Callable[[Path], None]] = None
    init: Optional[Callable[[], str]] = None


_SH = ". {f}; "
CONTROLS: tuple[Control, ...] = (
    Control("sh", "ENV", "{d}/hook.sh", "env", ". {f}; sh -i </dev/null",
            argv=("sh", "-c"), files={"hook.sh": "touch {d}/MARKER\n"}, tools=("sh",)),
    Control("bash", "PROMPT_COMMAND", "touch {d}/MARKER", "env",
            _SH + "bash --norc --noprofile -i </dev/null"),
    Control("zsh", "ZDOTDIR", "{d}/zdot", "env", ". {f}; zsh -c true", argv=("zsh", "-f", "-c"),
            files={"zdot/.zshenv": "touch {d}/MARKER\n"}, tools=("zsh",)),
    Control("fish", "XDG_CONFIG_HOME", "{d}/xdg", "fish", "source {f}; fish -c true",
            argv=("fish", "-N", "-c"), files={"xdg/fish/config.fish": "touch {d}/MARKER\n"},
            tools=("fish",)),
    Control("tcsh", "HOME", "{d}/tcshhome", "csh", "source {f}; tcsh -c true",
            argv=("tcsh", "-f", "-c"), files={"tcshhome/.tcshrc": "touch {d}/MARKER\n"},
            tools=("tcsh",)),
    Control("lmod", "LMOD_PACKAGE_PATH", "{d}/lmodsite", "lmod",
            "{init}; module use {d}/mod && module load advisor && module list",
            files={"lmodsite/SitePackage.lua": 'os.execute("touch {d}/MARKER")\n'},
            init=lmod_init),
    Control("environment-modules", "MODULES_SITECONFIG", "{d}/siteconfig.tcl", "tcl",
            "{init}; module use {d}/mod && module load advisor && module list",
            files={"siteconfig.tcl": "exec touch {d}/MARKER\n"}, init=modules_init),
    Control("ld.so", "LD_PRELOAD", "{d}/evil.so", "env", _SH + "/bin/true",
            build=lambda d: _cc(d, "evil.so")),
    Control("glibc", "GCONV_PATH", "{d}/gconv", "env",
            _SH + "iconv -f EVIL -t UTF-8 </dev/null || true",
            files={"gconv/gconv-modules": "module EVIL// INTERNAL evil 1\n"
                                          "module INTERNAL EVIL// evil 1\n"},
            tools=("iconv",), build=lambda d: _cc(d, "gconv/evil.so")),
    Control("lua", "LUA_INIT", 'os.execute("touch {d}/MARKER")', "env", _SH + "lua -e ''",
            tools=("lua",)),
    Control("tcl", "TCL_LIBRARY", "{d}/tcllib", "env", _SH + "echo exit | tclsh || true",
            files={"tcllib/init.tcl": "exec touch {d}/MARKER\n"}, tools=("tclsh",)),
    Control("java", "JAVA_TOOL_OPTIONS", "-javaagent:{d}/agent.jar", "env",
            _SH + "java -version", build=_java_agent),
    Control("perl", "PERL5OPT", "-I{d}/plib -MAdvisorMark", "env", _SH + "perl -e 1",
            files={"plib/AdvisorMark.pm": 'system("touch", "{d}/MARKER"); 1;\n'},
            tools=("perl",)),
    Control("python", "PYTHONPATH", "{d}/pylib", "env", _SH + f"'{sys.executable}' -c pass",
            files={"pylib/sitecustomize.py": 'open("{d}/MARKER", "w").close()\n'}),
    Control("ruby", "RUBYOPT", "-r{d}/mark.rb", "env", _SH + "ruby -e 1",
            files={"mark.rb": 'File.write("{d}/MARKER", "")\n'}, tools=("ruby",)),
    Control("node", "NODE_OPTIONS", "--require {d}/mark.js", "env", _SH + "node -e 0",
            files={"mark.js": 'require("fs").writeFileSync("{d}/MARKER", "")\n'},
            tools=("node",)),
    Control("tools", "EDITOR", "touch {d}/MARKER", "env",
            _SH + "git init -q repo && cd repo && git -c user.name=t -c user.email=t@t "
            "commit -q --allow-empty; true", tools=("git",)),
)


def prepare(c: Control, d: Path) -> list[str]:
    """Skip when a tool is missing; write and build the payloads under ``d``; return the argv
    that loads ``d``'s hand-written file of format ``c.fmt`` in the real consumer."""
    for t in c.tools + (c.argv[0],):
        if shutil.which(t) is None:
            pytest.skip(f"{t} not installed here ({c.consumer}'s control needs it)")
    init = c.init() if c.init is not None else ""
    for rel, text in c.files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text.replace("{d}", str(d)))
    if c.build is not None:
        c.build(d)
    fname = ASSIGN[c.fmt][0]
    (d / fname).parent.mkdir(parents=True, exist_ok=True)
    script = c.script.replace("{init}", init).replace("{f}", str(d / fname))
    return [shutil.which(c.argv[0]) or c.argv[0], *c.argv[1:], script.replace("{d}", str(d))]


def write_by_hand(c: Control, d: Path, *, assignment: bool) -> Path:
    """The file of format ``c.fmt`` holding ``c.name=c.value`` (or, without ``assignment``,
    what a refused emit leaves: an empty file of that format)."""
    fname, assign = ASSIGN[c.fmt]
    path = d / fname
    text = assign(c.name, c.value.replace("{d}", str(d))) if assignment else ""
    if c.fmt == "tcl":
        text = text or "#%Module1.0\n"
    path.write_text(text)
    return path
