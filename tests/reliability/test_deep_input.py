"""Depth and size bounded before parsing (advisor.nesting, advisor.textfile), on every entry path.

One hostile corpus, written at test time: a 5,000-deep JSON object, a 100,000-deep JSON array,
TOML nested 50,000 deep (arrays, inline tables, a dotted key), a 50,000-deep Tcl bracket nest,
YAML nested 50,000 deep and a "billion laughs" (10 levels of 9 aliases), Python (an
easyconfig) nested past CPython's parser, and a 17 MiB file (over every size limit).  Each
item goes through the real CLI, in a subprocess, by every entry path: ``lint FILE``, ``lint -``
(standard input), ``emit -p`` and ``show -p`` (a profile), the user and site configuration
scopes (``ADVISOR_USER_CONFIG``, ``ADVISOR_SITE_CONFIG``), and ``lint --format F`` for every
format that reads.  Each must end in one ``advisor: error:`` line naming the source and the
limit, exit 2: never a traceback, exit 4 (internal error), a signal (Tcl's C parser died of
SIGSEGV on the Tcl item) or a hang (``TIMEOUT_S``).

The line-based formats (sh, csh, fish, lmod) do not nest: they read the same text line by line
in linear time, so there they give findings on unreadable lines (exit 1) and the size refusal.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reliability_support import run_advisor

pytestmark = pytest.mark.slow

#: No run may take longer: a parser that hangs fails here rather than stalls the suite.
TIMEOUT_S = 120

#: Bytes of the oversized item: over the largest limit, profiles' 16 MiB
#: (advisor.profile.MAX_PROFILE_BYTES; env files 4 MiB, configuration files 1 MiB).
BIG_BYTES = 17 * 1024 * 1024

DEPTH = "nests more than 100 levels deep"
TOML_DEEP = "TOML text " + DEPTH
MALFORMED_TOML = "malformed TOML"
TOO_BIG = "larger than any"


def _laughs() -> str:
    text = 'env_vars:\n  set:\n    lol0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, 10):
        text += f"    lol{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n"
    return text


#: name -> (file name, text, what ``lint`` (format detected) says, what a TOML reader says:
#: a profile or a configuration scope).
CORPUS = {
    "json-object-5000": ("deep-object.json", '{"a":' * 5000 + "1" + "}" * 5000,
                         "JSON text " + DEPTH, TOML_DEEP),
    "json-array-100000": ("deep-array.json", "[" * 100_000 + "]" * 100_000,
                          "JSON text " + DEPTH, TOML_DEEP),
    "toml-array-50000": ("deep-array.toml", "[t]\nx = " + "[" * 50_000 + "]" * 50_000 + "\n",
                         TOML_DEEP, TOML_DEEP),
    "toml-inline-50000": ("deep-inline.toml",
                          "[t]\nx = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n",
                          TOML_DEEP, TOML_DEEP),
    "toml-dotted-50000": ("deep-dotted.toml",
                          "schema_version = 1\n" + ".".join(["a"] * 50_000) + " = 1\n",
                          TOML_DEEP, TOML_DEEP),
    "tcl-brackets-50000": ("deep-brackets",
                           "#%Module1.0\nsetenv X " + "[" * 50_000 + "]" * 50_000 + "\n",
                           "50000 Tcl command substitutions", TOML_DEEP),
    "yaml-flow-50000": ("deep-flow.yaml",
                        "env_vars:\n  set: " + "[" * 50_000 + "]" * 50_000 + "\n",
                        "YAML text " + DEPTH, TOML_DEEP),
    "yaml-block-50000": ("deep-block.yaml",
                         "env_vars:\n  set:\n    x:\n      " + "- " * 50_000 + "x\n",
                         "YAML text " + DEPTH, MALFORMED_TOML),
    "yaml-billion-laughs": ("laughs.yaml", _laughs(), "aliases expand to more than",
                            MALFORMED_TOML),
    "python-50000": ("deep.eb", 'modextravars = {"A": ' + "-" * 50_000 + "1}\n",
                     "nested deeper than CPython's parser", MALFORMED_TOML),
    "oversized-17MiB": ("big.env", None, TOO_BIG, TOO_BIG),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile")
    out = {}
    for name, (fname, text, *_rest) in CORPUS.items():
        p = d / fname
        if text is None:
            p.write_bytes(b"X=1\n" * (BIG_BYTES // 4))
        else:
            p.write_text(text, encoding="utf-8")
        out[name] = p
    return out


def _run_all(jobs):
    """Run ``(key, args, kwargs)`` jobs through ``run_advisor``, in parallel (each a process)."""
    def one(job):
        key, args, kw = job
        proc, _ = run_advisor(args, timeout=TIMEOUT_S, **kw)
        return key, proc

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(pool.map(one, jobs))


def _one_error_line(proc, source: str, expect: str, what: str) -> None:
    """Exit 2 and exactly one ``advisor: error:`` line naming ``source`` and saying
    ``expect``; no traceback."""
    assert proc.returncode == 2, (what, proc.returncode, proc.stderr[-600:])
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, what
    lines = [ln for ln in proc.stderr.splitlines()
             if ln.strip() and not ln.startswith("advisor: warning:")]
    assert len(lines) == 1, (what, lines[:5])
    assert lines[0].startswith("advisor: error: "), (what, lines[0])
    assert source in lines[0] and expect in lines[0], (what, source, expect, lines[0])


def _stdin(path: Path) -> dict:
    return {"input": path.read_text(encoding="utf-8")}


def test_lint_file_and_stdin(corpus):
    """``lint FILE`` and ``lint -``: the format is detected, its reader refuses the item."""
    jobs = []
    for name, path in corpus.items():
        jobs.append(((name, "file"), ["lint", str(path)], {}))
        jobs.append(((name, "stdin"), ["lint", "-"], _stdin(path)))
    done = _run_all(jobs)
    for (name, how), proc in done.items():
        source = "<stdin>" if how == "stdin" else str(corpus[name])
        _one_error_line(proc, source, CORPUS[name][2], f"lint {how}: {name}")


def test_profile_and_config_scopes(corpus, tmp_path):
    """``emit -p``, ``show -p`` and the user and site scopes read TOML: each item is refused
    before tomllib (or tomlkit) reads it, or is malformed TOML, or too large."""
    home = tmp_path / "home"
    jobs = []
    for name, path in corpus.items():
        jobs.append(((name, "emit -p"), ["emit", "-p", str(path)], {}))
        jobs.append(((name, "show -p"), ["show", "-p", str(path)], {}))
        for scope in ("USER", "SITE"):
            env = {f"ADVISOR_{scope}_CONFIG": str(path), "ADVISOR_HOME": str(home)}
            jobs.append(((name, f"{scope.lower()} scope"), ["config", "list"], {"env": env}))
    for (name, how), proc in _run_all(jobs).items():
        _one_error_line(proc, str(corpus[name]), CORPUS[name][3], f"{how}: {name}")


#: What each bound says (advisor.nesting, advisor.textfile; CPython's own tokenizer bound).
LIMITS = (DEPTH, "Tcl command substitutions", "aliases expand to more than",
          "nested deeper than CPython's parser", "too many nested parentheses", TOO_BIG)
_BRACKETS = {"json-object-5000", "json-array-100000", "toml-array-50000", "toml-inline-50000",
             "tcl-brackets-50000", "yaml-flow-50000"}
_PYTHON = _BRACKETS | {"toml-dotted-50000", "python-50000"}
_YAML = {"json-object-5000", "json-array-100000", "yaml-flow-50000", "yaml-block-50000",
         "yaml-billion-laughs"}
#: Format -> the items nested past its reader's bound (refused naming the limit); every format
#: refuses the oversized item.  The line-based formats (sh, csh, fish, lmod) do not nest.
DEEP_FOR = {"json": _BRACKETS, "toml": _BRACKETS | {"toml-dotted-50000"},
            "tcl": {"json-array-100000", "toml-array-50000", "tcl-brackets-50000",
                    "yaml-flow-50000"},
            "spack": _YAML, "spack-modules": _YAML,
            "easybuild": _PYTHON, "easybuild-hooks": _PYTHON, "reframe": _PYTHON,
            "sh": set(), "env": set(), "csh": set(), "fish": set(), "lmod": set()}


def test_every_format_reads_the_corpus_bounded(corpus):
    """``lint --format F`` of the whole corpus (lint reports each file it cannot read and goes
    on), for every format that reads: each item nested past the format's bound, and the
    oversized one, is refused in one line naming the file and the limit; every other item is
    refused in one line or read (csh reads ``setenv X [[[...]]]`` as a value); never a
    traceback (exit 2: files refused)."""
    from advisor.formats import builtin_parsers

    assert set(builtin_parsers()) == set(DEEP_FOR)
    files = [str(p) for p in corpus.values()]
    jobs = [(fmt, ["lint", "--format", fmt, *files], {}) for fmt in sorted(DEEP_FOR)
            if fmt != "env"]  # env is sh
    for fmt, proc in _run_all(jobs).items():
        what = f"lint --format {fmt}"
        assert proc.returncode == 2, (what, proc.returncode, proc.stderr[-600:])
        assert "Traceback" not in proc.stderr + proc.stdout, what
        errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("advisor: error: ")]
        for name, path in corpus.items():
            mine = [ln for ln in errors if ln.startswith(f"advisor: error: {path}")]
            if name in DEEP_FOR[fmt] or name.startswith("oversized"):
                assert len(mine) == 1 and any(w in mine[0] for w in LIMITS), (what, name, mine)
            else:  # refused (malformed, another shape) or read: settings or findings
                assert len(mine) <= 1, (what, name, mine)
