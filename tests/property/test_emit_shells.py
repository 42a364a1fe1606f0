"""Property: every shell format escapes arbitrary values so that the shell reads back the exact
bytes (sh, dash, bash, zsh for ``env``; tcsh for ``csh``; fish for ``fish``) and runs nothing;
values with control characters are refused with EmitError naming the setting."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.errors import EmitError
from advisor.specs.names import refused_reason
from advisor.models import PluginResult, Recommendation, Setting
from advisor.plugins import collect, make_plugin_manager
from support import sample_profile

#: Examples: each starts up to six shells (~10-50 ms each here), so this file stays under ~20 s.
EXAMPLES = 150

SHELLS = {"env": ["sh", "dash", "bash", "zsh"], "csh": ["tcsh"], "fish": ["fish"]}
SOURCE = {"sh": ". ./{f}", "dash": ". ./{f}", "bash": ". ./{f}", "zsh": ". ./{f}",
          "tcsh": "source ./{f}", "fish": "source ./{f}"}
FLAGS = {"tcsh": ["-f"], "fish": ["--no-config"], "zsh": ["-f"]}

#: Any character a value may hold: everything but control characters (Cc) and lone surrogates.
VALUE = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=40)
#: Variables a shell itself owns or recomputes (bash, dash, zsh, tcsh, fish manuals): a site
#: file setting them is not a quoting question, so the property leaves them out.
SHELL_OWNED = {
    "PATH", "HOME", "SHELL", "PWD", "OLDPWD", "SHLVL", "IFS", "PS1", "PS2", "PS3", "PS4", "ENV",
    "CDPATH", "FPATH", "MANPATH", "TERM", "USER", "USERNAME", "LOGNAME", "STATUS", "ARGV", "CWD",
    "PROMPT", "HISTORY", "RANDOM", "SECONDS", "LINENO", "PPID", "UID", "EUID", "GID", "EGID",
    "OPTIND", "OPTARG", "HISTCMD", "ERRNO", "TTYIDLE", "LANG", "LANGUAGE", "COLUMNS", "LINES",
    "PIPESTATUS", "PSVAR", "VERSION", "UMASK", "HOSTNAME", "HOST", "HOSTTYPE", "MACHTYPE",
    "OSTYPE", "VENDOR", "GROUP", "CMD_DURATION", "EPOCHSECONDS", "EPOCHREALTIME", "SRANDOM",
    "MAIL", "MAILPATH", "MAILCHECK", "NOGLOB", "TMOUT", "KEYBOARD_TIMEOUT", "WORDCHARS", "ZDOTDIR",
    "SAVEHIST", "HISTFILE", "HISTSIZE", "LISTMAX", "TERMCAP", "REPLY", "REPLY_", "MATCH",
    "MBEGIN", "MEND", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "TZ", "NLSPATH",
}
#: names emit accepts: not the shells' own, and none emit refuses as code a loader or shell
#: runs (``advisor.specs.names.refused_reason``: e.g. every ``LD_*``, which hypothesis found
#: as ``LD_``; their refusal has tests of its own)
NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True).filter(
    lambda n: n.upper() not in SHELL_OWNED and not n.upper().startswith(
        ("FISH", "ZSH", "BASH", "_", "LC_", "HIST", "TCSH", "LS_"))
    and refused_reason(n) is None)


REGISTRY = collect(make_plugin_manager(entry_points=False))
EMITTERS = REGISTRY.emitters
#: formats that write any library's environment settings (cxx-header, cupy and easybuild-hooks
#: write only their own libraries' settings: a "test" setting is never theirs to refuse)
def _any_library_env_writers():
    from advisor.formats import builtin_modules

    limited = {m.NAME for m in builtin_modules() if getattr(m, "LIBRARIES", None) is not None}
    return sorted(n for n, e in EMITTERS.items()
                  if "env" in (e.kinds or ("env",)) and n not in limited)


ENV_WRITERS = _any_library_env_writers()


def _profile(pairs):
    settings_ = [Setting(library="test", name=n, value=v) for n, v in pairs]
    rec = Recommendation(id="r", title="t", rationale="r", confidence="low", settings=settings_)
    res = PluginResult(plugin="p", probe="p", status="ok", recommendations=[rec])
    return sample_profile(results=[res])


def _env_after_sourcing(shell: str, path: Path) -> dict[str, bytes]:
    cmd = SOURCE[shell].format(f=path.name) + "; env -0"
    proc = subprocess.run([shell, *FLAGS.get(shell, []), "-c", cmd], cwd=path.parent,
                          capture_output=True, timeout=30,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                               "HOME": str(path.parent.parent / "home")})
    assert proc.returncode == 0, (shell, proc.stderr.decode(errors="replace"))
    out = {}
    for item in proc.stdout.split(b"\0"):
        k, sep, v = item.partition(b"=")
        if sep:
            out[k.decode(errors="replace")] = v
    return out


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(NAME, VALUE), min_size=1, max_size=4, unique_by=lambda t: t[0].upper()))
def test_emit_shell_roundtrip(tmp_path, pairs):
    prof = _profile(pairs)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    for fmt, shells in SHELLS.items():
        text = render(prof, fmt, REGISTRY, EmitOptions())
        path = work / f"site.{fmt}"
        path.write_text(text, encoding="utf-8")
        for shell in shells:
            if shutil.which(shell) is None:
                continue
            env = _env_after_sourcing(shell, path)
            for name, value in pairs:
                assert env.get(name) == value.encode("utf-8"), (shell, name, value, text)
        assert not [p for p in work.iterdir() if p.name not in
                    {"site.env", "site.csh", "site.fish"}], "a shell created a file"


def test_emit_shells_available():
    """Which consumers the property ran against (sh at least must exist)."""
    assert shutil.which("sh"), "no POSIX sh"


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(VALUE, st.characters(whitelist_categories=("Cc",)), VALUE,
       st.sampled_from(ENV_WRITERS))
def test_emit_control_characters_refused_naming_setting(before, ctrl, after, fmt):
    prof = _profile([("ADVISOR_PROP", before + ctrl + after)])
    with pytest.raises(EmitError, match="ADVISOR_PROP"):
        render(prof, fmt, REGISTRY, EmitOptions())


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(st.lists(st.tuples(NAME, st.one_of(VALUE, st.integers(-(2 ** 63), 2 ** 63 - 1),
                                          st.booleans(),
                                          st.floats(allow_nan=False, allow_infinity=False))),
                min_size=1, max_size=4, unique_by=lambda t: t[0].upper()),
       st.text(max_size=40))
def test_emit_structured_roundtrip(pairs, rationale):
    """``json`` and ``toml`` outputs: their parsers read back every value exactly (type kept),
    whatever the rationale text holds."""
    import json
    import tomllib

    settings_ = [Setting(library="test", name=n, value=v) for n, v in pairs]
    rec = Recommendation(id="r", title=rationale, rationale=rationale, confidence="low",
                         settings=settings_)
    prof = sample_profile(results=[PluginResult(plugin="p", probe="p", status="ok",
                                                recommendations=[rec])])
    for fmt, parse in (("json", json.loads), ("toml", tomllib.loads)):
        doc = parse(render(prof, fmt, REGISTRY, EmitOptions()))
        got = {s["name"]: s["value"] for s in doc["settings"]}
        for name, value in pairs:
            assert got[name] == value and type(got[name]) is type(value), (fmt, name, value)
