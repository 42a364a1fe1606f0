"""The easybuild-hooks file under the real EasyBuild 5 command line (the ``eb`` script beside
the test's Python, ``EB_PYTHON`` that Python), standalone as ``--hooks`` and called from a
site's own ``parse_hook``; and its version ranges (``version_range``, pure logic).

Each ``eb`` run is ``--module-only --force`` (only the module step: nothing is fetched or
built, and the sanity check is skipped) or ``-x`` (extended dry run: the module text is
printed), on minimal easyconfigs written in ``tmp_path`` with the framework's own
``EasyBlock`` (the framework alone ships no easyblocks, and the module step needs none).
``--logtostdout`` puts EasyBuild's log, where the hook says why it left an easyconfig
untouched, on standard output.  Lmod is the modules tool (``LMOD_CMD``).
"""

from __future__ import annotations

import dataclasses
import glob
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.emit import render
from advisor.errors import EmitError
from advisor.formats.easybuild_hooks import version_range
from advisor.plugins import collect, make_plugin_manager
from advisor.profile import load_profile
from advisor.specs.selection import EmitOptions
from support import SHIPPED_PROFILE

def _runner():
    spec = importlib.util.spec_from_file_location("deploy_tools_run",
                                                  Path(__file__).with_name("deploy_tools_run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: The minimal easyconfig of tests/formats/deploy_tools_run.py (NAME, VERSION).
EASYCONFIG = _runner().EASYCONFIG

#: A site's own hooks file loading ours by path (what EasyBuild does with --hooks itself).
SITE_BY_PATH = """import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "advisor_hooks", os.path.join(os.path.dirname(__file__), "advisor_hooks.py"))
advisor_hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(advisor_hooks)


def parse_hook(ec, *args, **kwargs):
    ec.update("modextravars", {"SITE_POLICY": "on"})
    advisor_hooks.apply(ec)
"""

#: The same, importing ours by name (its folder on PYTHONPATH).
SITE_BY_NAME = """import advisor_hooks


def parse_hook(ec, *args, **kwargs):
    ec.update("modextravars", {"SITE_POLICY": "on"})
    advisor_hooks.apply(ec)
"""


@dataclasses.dataclass(frozen=True)
class RangeOptions(EmitOptions):
    """EmitOptions with ``spec_range`` (the emit CLI's ``--spec-range``), for a tree where
    EmitOptions does not have that field yet (the format reads it with ``getattr``)."""

    spec_range: str = "exact"


def test_version_range_of_each_choice():
    assert version_range("5.0.2", "exact") == ("5.0.2", None)
    assert version_range("5.0.2", "minor") == ("5.0", "5.1")
    assert version_range("5.0.2", "major") == ("5", "6")
    assert version_range("5", "minor") == ("5.0", "5.1")
    assert version_range("4.1.2rc1", "minor") == ("4.1", "4.2")
    assert version_range(None, "minor") == (None, None)
    assert version_range("2023a-custom", "exact") == ("2023a-custom", None)


@pytest.mark.parametrize("version, spec_range, word", [
    ("2023a-custom", "minor", "MPICH version '2023a-custom'.*use --spec-range exact"),
    ("5.0.2", "patch", "choose one of exact, minor, major")])
def test_version_range_refusals(version, spec_range, word):
    with pytest.raises(EmitError, match=word):
        version_range(version, spec_range, "MPICH")


# --------------------------------------------------------------------------- real EasyBuild


@pytest.fixture(scope="module")
def hooks_file():
    """``(folder, spec_range) -> path`` of the hooks file of the shipped profile (defaults
    included, ``--all``) written there."""
    registry = collect(make_plugin_manager(entry_points=False))
    profile = load_profile(SHIPPED_PROFILE)

    def write(folder: Path, spec_range: str = "exact") -> Path:
        path = folder / "advisor_hooks.py"
        path.write_text(render(profile, "easybuild-hooks", registry,
                               RangeOptions(include_defaults=True, spec_range=spec_range)),
                        encoding="utf-8")
        return path
    return write


def mpich_env(hooks: Path) -> dict[str, str]:
    """The MPICH settings of a hooks file, read by importing it (its module data)."""
    spec = importlib.util.spec_from_file_location("advisor_hooks_under_test", hooks)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.__all__ == ["SETTINGS", "apply", "matches"]
    return dict(mod.SETTINGS["MPICH"]["env"])


def eb(tmp_path: Path, hooks: Path, versions, *flags: str, pythonpath: str = ""):
    """``eb --hooks=HOOKS FLAGS... MPICH-V.eb...``; returns (stdout+stderr, modules folder)."""
    pytest.importorskip("easybuild.framework", reason="easybuild-framework not installed (the "
                        "test extra has it)")
    lmod = sorted(glob.glob("/usr/share/lmod/lmod/libexec/lmod")
                  + glob.glob("/usr/share/lmod/*/libexec/lmod"))
    if not lmod:
        pytest.skip("Lmod not installed here (EasyBuild needs a modules tool; CI installs lmod)")
    files = []
    for v in versions:
        path = tmp_path / f"MPICH-{v}.eb"
        path.write_text(EASYCONFIG.format(name="MPICH", version=v), encoding="utf-8")
        files.append(str(path))
    script = Path(sys.executable).parent / "eb"
    if not script.is_file():
        pytest.skip(f"no eb script beside {sys.executable} (easybuild-framework installs one)")
    prefix = tmp_path / "eb-prefix"
    # eb finds its own scripts (rpath_args.py) through $PATH; EB_PYTHON: this interpreter
    env = {"PATH": f"{script.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "HOME": str(tmp_path), "EB_PYTHON": sys.executable, "LMOD_CMD": lmod[0],
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONPATH": pythonpath}
    args = [str(script), f"--prefix={prefix}",
            "--modules-tool=Lmod", f"--hooks={hooks}", "--logtostdout", *flags, *files]
    if os.geteuid() == 0:
        args.append("--allow-use-as-root-and-accept-consequences")
    proc = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return proc.stdout + proc.stderr, prefix / "modules" / "all" / "MPICH"


def module_sets(lua: Path, env: dict[str, str]) -> dict[str, bool]:
    text = lua.read_text(encoding="utf-8")
    return {name: f'setenv("{name}", "{value}")' in text for name, value in env.items()}


@pytest.mark.integration
def test_eb_standalone_hooks_module_only(hooks_file, tmp_path):
    hooks = hooks_file(tmp_path)
    env = mpich_env(hooks)
    out, modules = eb(tmp_path, hooks, ["5.0.2", "4.3.2"], "--module-only", "--force")
    assert all(module_sets(modules / "5.0.2.lua", env).values())
    assert not any(module_sets(modules / "4.3.2.lua", env).values())
    assert 'setenv("SITE_OWN_VARIABLE", "kept")' in (modules / "4.3.2.lua").read_text()
    # EasyBuild's log says why the other version was left alone
    assert ("hpc-advisor: MPICH 4.3.2 left untouched: measured with MPICH 5.0.2, written for "
            "versions 5.0.2 (--spec-range exact)") in out


@pytest.mark.integration
def test_eb_extended_dry_run_prints_the_settings(hooks_file, tmp_path):
    hooks = hooks_file(tmp_path)
    out, _modules = eb(tmp_path, hooks, ["5.0.2"], "-x")
    for name, value in mpich_env(hooks).items():
        assert f'setenv("{name}", "{value}")' in out


@pytest.mark.integration
@pytest.mark.parametrize("site", ["by-path", "by-name"])
def test_eb_site_parse_hook_calls_apply(hooks_file, tmp_path, site):
    hooks = hooks_file(tmp_path)
    env = mpich_env(hooks)
    own = tmp_path / "site_hooks.py"
    own.write_text(SITE_BY_PATH if site == "by-path" else SITE_BY_NAME, encoding="utf-8")
    out, modules = eb(tmp_path, own, ["5.0.2", "4.3.2"], "--module-only", "--force",
                      pythonpath=str(tmp_path) if site == "by-name" else "")
    for version in ("5.0.2", "4.3.2"):
        assert 'setenv("SITE_POLICY", "on")' in (modules / f"{version}.lua").read_text()
    assert all(module_sets(modules / "5.0.2.lua", env).values())
    assert not any(module_sets(modules / "4.3.2.lua", env).values())
    assert "hpc-advisor: MPICH 4.3.2 left untouched" in out


@pytest.mark.integration
@pytest.mark.parametrize("spec_range, versions", [
    ("minor", {"5.0.2": True, "5.0.11": True, "5.1.0": False, "4.3.2": False}),
    ("major", {"5.0.11": True, "5.1.0": True, "6.0.0": False, "4.3.2": False})])
def test_eb_spec_range_widens_the_match(hooks_file, tmp_path, spec_range, versions):
    hooks = hooks_file(tmp_path, spec_range)
    env = mpich_env(hooks)
    _out, modules = eb(tmp_path, hooks, list(versions), "--module-only", "--force")
    got = {v: all(module_sets(modules / f"{v}.lua", env).values()) for v in versions}
    assert got == versions


@pytest.mark.integration
def test_eb_an_easyconfigs_own_value_is_kept(hooks_file, tmp_path):
    """A variable the easyconfig (here: the site's hook before ours) sets itself keeps its
    value, and EasyBuild's log says so (a new user's finding: ours replaced it, logged as
    added)."""
    hooks = hooks_file(tmp_path)
    env = mpich_env(hooks)
    name = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"
    assert name in env and env[name] != "65536"
    own = tmp_path / "site_hooks.py"
    own.write_text(SITE_BY_PATH.replace('{"SITE_POLICY": "on"}', f'{{"{name}": "65536"}}'),
                   encoding="utf-8")
    out, modules = eb(tmp_path, own, ["5.0.2"], "--module-only", "--force")
    text = (modules / "5.0.2.lua").read_text()
    assert f'setenv("{name}", "65536")' in text and f'setenv("{name}", "{env[name]}")' not in text
    assert f"hpc-advisor: MPICH 5.0.2: the easyconfig's own {name} kept" in out
    others = {k: v for k, v in env.items() if k != name}
    assert all(module_sets(modules / "5.0.2.lua", others).values())


def test_a_hooks_file_with_nothing_to_add_is_refused():
    """A class profile of host-buffer only (glibc's and a pool's settings: no easyconfig builds
    either) would give ``SETTINGS = {}``: refused, as an empty module is (a new user's
    finding)."""
    from advisor.errors import EmitError

    registry = collect(make_plugin_manager(entry_points=False))
    prof = load_profile(Path(__file__).resolve().parents[1] / "data" / "fleet"
                        / "class-x86_64_v4-2c-24g.toml")
    with pytest.raises(EmitError, match="nothing to write as easybuild-hooks: "):
        render(prof, "easybuild-hooks", registry, RangeOptions())
