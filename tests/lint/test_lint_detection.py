"""``advisor lint --format auto``: each format module claims its files (its ``SUFFIXES`` and
``sniff``); a file no format claims is refused with the formats listed; an empty input is a
``nothing-read`` warning that fails the run (issue 28, part 8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from advisor import lint
from advisor.formats import builtin_modules
from advisor.specs.entry import NOTHING_READ

REPO = Path(__file__).resolve().parents[2]


def _lint(*args, **kw):
    return subprocess.run([sys.executable, "-m", "advisor", "lint", *args], capture_output=True,
                          text=True, timeout=120, **kw)


def test_readme_is_refused_not_read_as_toml(tmp_path, advisor_home):
    """The project's README has a ``[settings.pin]`` line; it is Markdown, not TOML."""
    readme = tmp_path / "README.md"
    readme.write_text((REPO / "README.md").read_text())
    done = _lint(str(readme))
    assert done.returncode == 2 and done.stdout == ""
    (line,) = [ln for ln in done.stderr.splitlines() if str(readme) in ln]
    assert "no format claims this file" in line and "TOML" not in line
    for name in ("csh", "fish", "json", "lmod", "sh", "spack", "tcl", "toml"):
        assert f" {name}," in line or line.endswith(f" {name}")


@pytest.mark.parametrize("text, fmt", [
    ("#!/bin/bash\n#SBATCH -N 2\nsrun ./app\n", "sh"),
    ("#!/usr/bin/env zsh\nexport A=1\n", "sh"),
    ("# site settings\nSHELL=/bin/bash\nPATH=/usr/bin\n", "sh"),
    ("#!/bin/tcsh\nsetenv A 1\n", "csh"),
    ("setenv A 1\n", "csh"),
    ("#!/usr/bin/env fish\nset -gx A 1\n", "fish"),
    ("#%Module1.0\nsetenv A 1\n", "tcl"),
    ('setenv("A", "1")\n', "lmod"),
    ("[settings.pin]\nx = 1\n", "toml"),
    ("# Title\n\n[settings.pin]\nThis is prose.\n", None),
    ("module load gcc\nsrun ./app\n", None),
    ("Remember to set the threshold.\n", None),
])
def test_detection_from_the_text(text, fmt):
    assert lint.detect_format(text, "<stdin>") == fmt


def test_every_suffix_is_its_own_module():
    for mod in builtin_modules():
        for suffix in getattr(mod, "SUFFIXES", ()):
            assert lint.detect_format("", f"x{suffix}") == getattr(mod, "DETECTED_AS", mod.NAME)


def test_detection_asks_the_format_module(monkeypatch):
    """No table in lint: a module whose ``sniff`` says no is not detected."""
    import advisor.formats.toml as toml

    text = "schema_version = 3\n[facts]\nhostname = 'h'\n"
    assert lint.detect_format(text, "<stdin>") == "toml"
    monkeypatch.setattr(toml, "sniff", lambda text: False)
    assert lint.detect_format(text, "<stdin>") is None
    with pytest.raises(lint.BadInputError, match="no format claims this file"):
        lint.read_env_text(text, "<stdin>")


@pytest.mark.parametrize("fmt", ["auto", "sh", "json", "toml"])
def test_empty_text_is_nothing_read(fmt):
    for text in ("", "\n  \n"):
        (e,) = lint.read_env_text(text, "x.json", fmt)
        assert e.problem == NOTHING_READ and e.line is None
        (f,) = lint.lint_entries([e], libraries={})
        assert (f.finding.id, f.severity, f.location) == ("nothing-read", "warning", "x.json")


def test_empty_file_and_empty_stdin_fail_the_run(tmp_path, advisor_home):
    empty = tmp_path / "site.env"
    empty.write_text("")
    for args, kw, where in (([str(empty)], {}, str(empty)), (["-"], {"input": ""}, "<stdin>")):
        done = _lint(*args, **kw)
        assert done.returncode == 1, done.stderr
        assert done.stdout.startswith(f"{where}: warning: ") and "[nothing-read]" in done.stdout
