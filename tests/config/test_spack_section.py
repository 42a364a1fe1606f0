"""``[spack]`` and ``--spec-range`` through the real ``advisor emit`` process: the scopes give
the defaults, the option wins, bad values are one line naming the file (or option), exit 2."""

from __future__ import annotations

from config_support import advisor
from support import SHIPPED_PROFILE

EMIT = ("emit", "-f", "spack-modules", "--all", "-p", str(SHIPPED_PROFILE))


def test_site_scope_and_option_choose_keys_and_placement(scopes):
    site, _user = scopes
    site.parent.mkdir(parents=True)
    site.write_text('[spack]\nspec_range = "major"\nevery_program = ["openmpi", "hpl"]\n')
    proc = advisor(*EMIT)
    assert proc.returncode == 0, proc.stderr
    assert "      mpich@5:\n" in proc.stdout and "      hpl:\n" in proc.stdout
    assert "      all:\n" not in proc.stdout
    assert ("warning: the profile records no dla-future version: its settings go under the "
            "key 'dla-future'") in proc.stderr
    proc = advisor(*EMIT, "--spec-range", "exact")  # the command line scope wins
    assert proc.returncode == 0 and "      mpich@5.0.2:\n" in proc.stdout, proc.stderr


def test_bad_values_are_one_line_and_exit_2(scopes):
    site, _user = scopes
    site.parent.mkdir(parents=True)
    site.write_text('[spack]\nevery_program = ["hierarchy"]\n')
    proc = advisor(*EMIT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{site}:2: key 'spack.every_program'" in proc.stderr
    site.write_text("")
    proc = advisor(*EMIT, "--spec-range", "patch")
    assert proc.returncode == 2 and "--spec-range 'patch': expected one of" in proc.stderr
    proc = advisor("emit", "-f", "lmod", "-p", str(SHIPPED_PROFILE), "--spec-range", "minor")
    assert proc.returncode == 2 and "--spec-range goes with --format spack-modules" in \
        proc.stderr
