"""lint applies emit's naming rules to advisor's own documents (profiles, ``emit -f toml|json``):
a hand-edited profile whose setting emit would refuse gets an error from lint too (found by a
new user: lint passed a profile that emit then refused)."""

from __future__ import annotations

import pytest

from advisor import lint
from advisor.plugins import load
from support import SHIPPED_PROFILE, recorded_catalogues

OWN = "DLAF_UMPIRE_HOST_MEMORY_POOL_ALIGNMENT_BYTES"


def _lint_profile(tmp_path, name: str):
    path = tmp_path / "edited.toml"
    text = SHIPPED_PROFILE.read_text()
    assert f'name = "{OWN}"' in text
    path.write_text(text.replace(f'name = "{OWN}"', f'name = "{name}"'))
    reg = load()
    return lint.lint_entries(lint.read_env_file(path), knobs=reg.knobs, libraries=reg.libraries,
                             catalogues=recorded_catalogues())


@pytest.mark.parametrize("name, fid", [("PROMPT_COMMAND", "refused-name"),
                                       ("LD_PRELOAD", "refused-name"),
                                       ("MY_RANDOM_VAR", "undeclared-name")])
def test_hand_edited_profile_gets_emits_refusal_from_lint(tmp_path, name, fid):
    hits = [f for f in _lint_profile(tmp_path, name) if f.finding.id == fid]
    assert hits and hits[0].severity == "error" and hits[0].name == name
    assert hits[0].line is not None and hits[0].path.endswith("edited.toml")


def test_unedited_profile_and_site_files_are_not_held_to_emits_rules(tmp_path):
    findings = _lint_profile(tmp_path, OWN)
    assert not [f for f in findings if f.finding.id in ("refused-name", "undeclared-name")]
    site = tmp_path / "site.sh"  # a site's own file may set PATH or LD_PRELOAD: not our advice
    site.write_text("export LD_PRELOAD=/opt/lib/libhook.so\nexport MY_VAR=1\n")
    reg = load()
    got = lint.lint_entries(lint.read_env_file(site), knobs=reg.knobs, libraries=reg.libraries)
    assert not [f for f in got if f.finding.id in ("refused-name", "undeclared-name")]


def test_reading_an_easyconfig_like_file_warns_nothing(tmp_path):
    """Python's own SyntaxWarning for text such as ``1abc`` never reaches the user's stderr:
    the file is data (found by the lint fuzz test under warnings capture)."""
    import warnings

    path = tmp_path / "x.eb"
    path.write_text("modextravars = {'A': 1}\nb = 1if 1 else 2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        entries = lint.read_env_file(path, "easybuild")
    assert [(e.name, e.value) for e in entries] == [("A", "1")]
