"""The lmod and tcl modules depend on the MPI module they were measured with (issue 29, part 3),
checked in the real tools: Lmod (Debian) reading our Lua and our Tcl module, Environment
Modules 5 reading our Tcl module, each next to a stand-in MPI module (``mpich/4.3.2``: a real
modulefile that declares the family ``MPI``) in a temporary ``MODULEPATH``.

- ``prereq``: loading without the MPI module fails with the tool's own prereq message and sets
  nothing; with it loaded, it loads.  Environment Modules 5 loads the requirement itself when
  its ``auto_handling`` is on (its default), so the refusal is shown with it off.
- ``depends_on``: loading loads the MPI module too.
- ``family``: the MPI family's loaded module must be mpich (any version); another MPI of the
  family is refused with our message.
- two MPI libraries: either MPI module satisfies the module.
- the site config's ``[modules]`` and ``emit --mpi-module``/``--module-dependency`` choose the
  name and the form; an unsafe name is refused with one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from consumers import base_env, lmod_init, modules_init, mpi_module, read_env0
from emit_fixtures import facts, make_profile

from advisor.emit import render
from advisor.errors import EmitError
from advisor.models import PluginResult, Recommendation, Setting
from advisor.plugins import collect, make_plugin_manager
from advisor.specs.selection import EmitOptions, ModuleDeps
from support import SHIPPED_PROFILE, tool

pytestmark = pytest.mark.integration

#: The site's MPI module name the tests configure (the brief's example: Debian's mpich 4.3.2).
SITE_MPI = "mpich/4.3.2"
#: (tool, module format, code defining `module`)
TOOLS = {"lmod-lua": ("lmod", lmod_init), "lmod-tcl": ("tcl", lmod_init),
         "modules-tcl": ("tcl", modules_init)}


@pytest.fixture(scope="module")
def registry():
    return collect(make_plugin_manager(entry_points=False))


def _profile(*, openmpi: bool = False):
    """mpich 5.0.2 measured; a glibc and an MPICH setting (with ``openmpi``: also an Open MPI
    MCA setting, the Open MPI version recorded by ompi_info)."""
    settings = [Setting(library="glibc", name="GLIBC_TUNABLES", value="glibc.malloc.hugetlb=1",
                        type="list", separator=":"),
                Setting(library="mpich", name="MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
                        value="16384")]
    if openmpi:
        settings.append(Setting(library="openmpi", name="OMPI_MCA_btl_sm_use_cma",
                                value="1"))
    fx = facts(extra={"openmpi": {"ompi_version": "5.0.11"}}) if openmpi else facts()
    return make_profile([PluginResult(plugin="p", probe="p", status="ok", recommendations=[
        Recommendation(id="r", title="measured", rationale="r", confidence="high",
                       settings=settings)])], fx)


def _tree(tmp_path: Path, fmt: str, text: str, mpis=(SITE_MPI,)) -> Path:
    root = tmp_path / "modules"
    (root / "site").mkdir(parents=True)
    (root / "site" / ("advisor.lua" if fmt == "lmod" else "advisor")).write_text(
        text, encoding="utf-8")
    for name in mpis:
        mpi_module(root, fmt, name)
    return root


def _load(init: str, root: Path, pre: str, tmp_path: Path, auto: str = "0"):
    """``module load site/advisor`` after ``pre`` (modules to load first); returns
    ``(exit status of the load, its messages with whitespace runs as one space (the tools
    wrap lines), the environment after it)``."""
    first = f"module load {pre} || exit 9\n" if pre else ""
    script = (f"{init}\nmodule use {root}\n{first}module load site/advisor\nrc=$?\n"
              "printf '%s\\0' \"RC=$rc\"\nenv -0\n")
    env = base_env(tmp_path, None)
    env["MODULES_AUTO_HANDLING"] = auto  # Environment Modules' setting; Lmod ignores it
    proc = subprocess.run([tool("bash"), "--norc", "--noprofile", "-c", script], cwd=tmp_path,
                          env=env, capture_output=True, timeout=60)
    got = read_env0(proc.stdout)
    assert b"RC" in got, proc.stderr.decode(errors="replace")
    return int(got[b"RC"]), " ".join(proc.stderr.decode(errors="replace").split()), got


def _emit(registry, fmt: str, dependency: str, profile=None, mpi=(("mpich", SITE_MPI),)):
    opts = EmitOptions(modules=ModuleDeps(dependency=dependency, mpi=tuple(mpi)))
    return render(profile or _profile(), fmt, registry, opts)


#: What each tool says when a prereq is missing (its own message, whitespace runs as one space;
#: seen with Lmod 8.6.19 and Environment Modules 5.2.0).
PREREQ_SAYS = {"lmod-lua": "without these module(s) loaded: mpich/4.3.2",
               "lmod-tcl": "At least one of these module(s) must be loaded: mpich/4.3.2",
               "modules-tcl": "HINT: the following module must be loaded first: mpich/4.3.2"}


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_prereq_refuses_until_the_mpi_module_is_loaded(name, registry, tmp_path):
    fmt, init = TOOLS[name]
    root = _tree(tmp_path, fmt, _emit(registry, fmt, "prereq"))
    rc, said, env = _load(init(), root, "", tmp_path)
    assert rc != 0 and PREREQ_SAYS[name] in said, said
    assert b"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD" not in env
    rc, said, env = _load(init(), root, SITE_MPI, tmp_path)
    assert rc == 0, said
    assert env[b"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == b"16384"


def test_environment_modules_auto_handling_loads_the_prereq(registry, tmp_path):
    """Environment Modules 5 (auto_handling on, its default) loads a prereq it can find."""
    root = _tree(tmp_path, "tcl", _emit(registry, "tcl", "prereq"))
    rc, said, env = _load(modules_init(), root, "", tmp_path, auto="1")
    assert rc == 0 and "Loading requirement: mpich/4.3.2" in said, said
    assert env[b"FAKE_MPI"] == SITE_MPI.encode()


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_depends_on_loads_the_mpi_module(name, registry, tmp_path):
    fmt, init = TOOLS[name]
    text = _emit(registry, fmt, "depends_on")
    assert ('depends_on("mpich/4.3.2")' if fmt == "lmod" else 'depends-on "mpich/4.3.2"') in text
    root = _tree(tmp_path, fmt, text)
    for auto in ("0", "1"):  # Environment Modules' auto_handling off and on
        rc, said, env = _load(init(), root, "", tmp_path, auto=auto)
        assert rc == 0, said
        assert env[b"FAKE_MPI"] == SITE_MPI.encode()
        assert env[b"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == b"16384"


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_family_wants_the_measured_mpi_as_the_family_member(name, registry, tmp_path):
    fmt, init = TOOLS[name]
    root = _tree(tmp_path, fmt, _emit(registry, fmt, "family"),
                 mpis=(SITE_MPI, "mpich/5.0.2", "openmpi/5.0.11"))
    rc, said, _ = _load(init(), root, "", tmp_path)
    assert rc != 0 and "needs mpich loaded as the MPI family" in said, said
    rc, said, _ = _load(init(), root, "openmpi/5.0.11", tmp_path)
    assert rc != 0 and "needs mpich loaded as the MPI family" in said, said
    for member in (SITE_MPI, "mpich/5.0.2"):  # any version of the measured MPI
        rc, said, env = _load(init(), root, member, tmp_path)
        assert rc == 0, said
        assert env[b"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == b"16384"


@pytest.mark.parametrize("dependency", ["prereq", "depends_on"])
@pytest.mark.parametrize("name", sorted(TOOLS))
def test_two_mpi_libraries_need_either(name, dependency, registry, tmp_path):
    """Settings of MPICH and Open MPI: either MPI module satisfies the module (depends_on cannot
    choose one to load, so it is written as the prereq of either)."""
    fmt, init = TOOLS[name]
    text = _emit(registry, fmt, dependency, _profile(openmpi=True), mpi=())
    assert ('prereq_any("mpich/5.0.2", "openmpi/5.0.11")' if fmt == "lmod"
            else 'prereq "mpich/5.0.2" "openmpi/5.0.11"') in text
    assert ("asked: depends_on; two MPIs" in text) == (dependency == "depends_on")
    root = _tree(tmp_path, fmt, text, mpis=("mpich/5.0.2", "openmpi/5.0.11"))
    rc, said, _ = _load(init(), root, "", tmp_path)
    assert rc != 0, said
    for mpi in ("mpich/5.0.2", "openmpi/5.0.11"):
        rc, said, env = _load(init(), root, mpi, tmp_path)
        assert rc == 0, said
        assert env[b"OMPI_MCA_btl_sm_use_cma"] == b"1"


@pytest.mark.parametrize("fmt", ["lmod", "tcl"])
def test_no_mpi_recorded_no_dependency_and_none_writes_none(fmt, registry):
    """A profile that records no MPI and sets no MPI setting depends on none; ``none`` writes
    none either (comment lines aside: the administrators' block names the choice)."""
    res = _profile().results[0]
    rec = res.recommendations[0]
    glibc = res.model_copy(update={"recommendations": [rec.model_copy(
        update={"settings": rec.settings[:1]})]})
    no_mpi = make_profile([glibc], facts(mpi=facts().mpi.model_copy(
        update={"implementation": None, "version": None})))
    for text in (render(no_mpi, fmt, registry, EmitOptions()), _emit(registry, fmt, "none")):
        code = [ln for ln in text.splitlines() if not ln.startswith(("#", "--"))]
        for word in ("prereq", "depends", "module load", "LMOD_FAMILY_MPI"):
            assert not [ln for ln in code if word in ln], (word, text)


@pytest.mark.parametrize("fmt", ["lmod", "tcl"])
def test_a_recorded_version_that_is_no_plain_name_is_refused(fmt, registry):
    hostile = make_profile(_profile().results, facts(mpi=facts().mpi.model_copy(
        update={"version": '5.0"); os.execute("touch MARKER'})))
    with pytest.raises(EmitError, match=r"MPI module name .* is not a plain module name; set it "
                                        r"in the site config \(\[modules\] mpi.mpich\)"):
        render(hostile, fmt, registry, EmitOptions())
    assert SITE_MPI in _emit(registry, fmt, "prereq", hostile)  # the site's name fixes it
    text = _emit(registry, fmt, "none", hostile, mpi=())  # the name only in a comment line
    assert "MARKER" not in "\n".join(ln for ln in text.splitlines()
                                     if not ln.startswith(("#", "--")))


def _cli(tmp_path: Path, *args: str, site: str = "") -> subprocess.CompletedProcess:
    conf = tmp_path / "site.toml"
    conf.write_text(site, encoding="utf-8")
    env = {**base_env(tmp_path, None), "ADVISOR_SITE_CONFIG": str(conf),
           "ADVISOR_USER_CONFIG": str(tmp_path / "none.toml"), "PYTHONPATH": ":".join(sys.path)}
    return subprocess.run([sys.executable, "-m", "advisor", "emit", "--profile",
                           str(SHIPPED_PROFILE), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_site_config_and_cli_choose_name_and_form(tmp_path):
    site = '[modules]\nmpi = {mpich = "mpich/4.3.2"}\ndependency = "depends_on"\n'
    proc = _cli(tmp_path, "-f", "lmod", "--all", site=site)  # --all: the MPICH CVARs too
    assert proc.returncode == 0, proc.stderr
    assert 'depends_on("mpich/4.3.2")' in proc.stdout
    proc = _cli(tmp_path, "-f", "tcl", "--all", "--mpi-module", "mpich=mpi/mpich-x86_64",
                "--module-dependency", "prereq", site=site)
    assert proc.returncode == 0, proc.stderr
    assert 'prereq "mpi/mpich-x86_64"' in proc.stdout


@pytest.mark.parametrize("args, site, says", [
    ((), '[modules]\nmpi = {mpich = "mpich/4.3.2\\"); os.execute(\\"id"}\n',
     "site.toml:2: key 'modules.mpi.mpich': String should match pattern"),
    ((), '[modules]\ndependency = "always"\n', "site.toml:2: key 'modules.dependency'"),
    (("--mpi-module", "mpich=../evil"), "", "--mpi-module 'mpich=../evil': give LIBRARY=NAME"),
    (("--module-dependency", "load"), "", "--module-dependency 'load': not one of prereq"),
    # a misspelt library (a new user's finding: the default name stayed in without a word)
    (("--all", "--mpi-module", "mpic=mpich/4.3.2"), "",
     "--mpi-module names mpic: not an MPI library of the loaded plugins (known: mpich, openmpi)"),
    (("--all",), '[modules]\nmpi = {mpichh = "mpich/4.3.2"}\n', "names mpichh: not an MPI"),
])
def test_bad_names_are_one_line_and_exit_2(args, site, says, tmp_path):
    proc = _cli(tmp_path, "-f", "lmod", *args, site=site)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("advisor: error: ")]
    assert says in line, line


def test_help_names_the_profile_it_was_made_from(tmp_path):
    """A user's 'advisor show' reads the user's own host profile, which a user rarely has (a
    new user's finding): the help names the module's profile (@NAME for a shipped one)."""
    proc = _cli(tmp_path, "-f", "lmod")
    assert "  advisor show -p @x86_64-icelake-2core-vm   the measurements" in proc.stdout
    own = tmp_path / "site-profile.toml"
    own.write_bytes(SHIPPED_PROFILE.read_bytes())
    env = {**os.environ, "PYTHONPATH": ":".join(sys.path)}
    # given relative, named absolute: the help is read from any directory
    proc = subprocess.run([sys.executable, "-m", "advisor", "emit", "-f", "tcl", "-p", own.name],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert f"advisor explain NAME -p {own}" in proc.stdout, proc.stderr
    assert "your site may keep it elsewhere" in proc.stdout


@pytest.mark.parametrize("fmt", ["env", "spack-modules"])
def test_module_options_refused_for_formats_without_modules(fmt, tmp_path):
    """--mpi-module shapes lmod and tcl files only; elsewhere it did nothing, silently (a new
    user's finding)."""
    proc = _cli(tmp_path, "-f", fmt, "--mpi-module", "mpich=mpich/4.3.2")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert "--mpi-module goes with --format lmod or tcl, not " + fmt in proc.stderr
