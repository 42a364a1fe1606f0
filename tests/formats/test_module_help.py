"""The lmod and tcl modules describe themselves, checked in the real tools: Lmod's ``module
show``/``whatis``/``help`` and its family swap, Environment Modules' ``module show``/``help``
and its family conflict; and a selection with nothing to set is an error, not an empty module
(issue 18)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from consumers import MPI_MODULE, base_env, lmod_init, modules_init, mpi_module

from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.errors import EmitError
from advisor.machine_class import class_id
from advisor.plugins import collect, make_plugin_manager
from advisor.profile import load_profile
from support import SHIPPED_PROFILE, profile_made_here, tool

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def registry():
    return collect(make_plugin_manager(entry_points=False))


def _tree(tmp_path: Path, fmt: str, registry) -> tuple[Path, dict]:
    """A module tree with ``site/advisor`` (defaults left out) and ``site/other`` (``--all``)
    from the shipped profile."""
    prof = load_profile(SHIPPED_PROFILE)
    root = tmp_path / fmt
    (root / "site").mkdir(parents=True)
    ext = ".lua" if fmt == "lmod" else ""
    for name, opts in (("advisor", EmitOptions()), ("other", EmitOptions(include_defaults=True))):
        (root / "site" / f"{name}{ext}").write_text(render(prof, fmt, registry, opts),
                                                     encoding="utf-8")
    mpi_module(root, fmt)  # the modules' prereq (advisor.formats.moddeps)
    return root, {"prof": prof}


def _bash(init: str, root: Path, body: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = f"{init}\nmodule use {root}\n{body}\n"
    return subprocess.run([tool("bash"), "--norc", "--noprofile", "-c", script], cwd=tmp_path,
                          env=base_env(tmp_path, None), capture_output=True, text=True,
                          timeout=60)


def _expect_texts(prof) -> list[str]:
    names = sorted({s.name for _, _, s in prof.settings()})  # env, not default-confirming
    return [f"Machine: machine class {class_id(prof.facts)} (host {prof.provenance.hostname}, "
            f"fingerprint {prof.fingerprint})",
            f"Date: {prof.provenance.created} (profile made)",
            "Sets: " + ", ".join(names)]


def _users_only(htext: str) -> None:
    """The help users see: each setting with its why in one line, how to check; no
    administrators' command (issue 29: re-probe, emit, deploy are comments).  ``site/advisor``
    writes no MPI setting (glibc's and DLA-Future's only), so it names no MPI module."""
    assert ("  GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.cpu.x86_non_temporal_threshold="
            "0x4000000 (glibc malloc: madvise(MADV_HUGEPAGE) on its mmap'ed chunks; glibc "
            "memcpy: non-temporal stores from 64 MiB)") in htext
    assert "MPI module" not in htext
    assert "  advisor show " in htext and "  advisor lint --env " in htext
    for admin in ("advisor emit", "advisor probe", "advisor verify", "--all", "MODULEPATH",
                  "Not set by this module"):
        assert admin not in htext, admin


def test_lmod_show_whatis_help_and_family_swap(tmp_path, registry):
    init = lmod_init()
    root, ctx = _tree(tmp_path, "lmod", registry)
    show = _bash(init, root, "module show site/advisor", tmp_path)
    assert show.returncode == 0, show.stderr
    text = show.stderr + show.stdout  # Lmod prints module show on stderr
    assert "help([[" in text and "This module sets:" in text
    assert 'family("hpc_advisor")' in text
    for want in _expect_texts(ctx["prof"]):
        assert f'whatis("{want}")' in text
    whatis = _bash(init, root, "module whatis site/advisor", tmp_path)
    for want in _expect_texts(ctx["prof"]):
        assert f"site/advisor        : {want}" in whatis.stderr + whatis.stdout
    helped = _bash(init, root, "module help site/advisor", tmp_path)
    htext = helped.stderr + helped.stdout
    assert "  GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in htext
    _users_only(htext)
    assert "-- For site administrators" in (root / "site" / "advisor.lua").read_text()
    # site/other writes the MPICH CVARs (--all): it needs the MPI module they were measured with
    assert f'prereq("{MPI_MODULE}")' in (root / "site" / "other.lua").read_text()
    assert "prereq(" not in (root / "site" / "advisor.lua").read_text()
    swap = _bash(init, root, f"module load {MPI_MODULE} site/advisor && module load site/other && "
                 "module -t list 2>&1 && echo CMA=$MPIR_CVAR_CH4_CMA_ENABLE "
                 "FAMILY=$LMOD_FAMILY_HPC_ADVISOR", tmp_path)
    out = swap.stdout + swap.stderr
    assert swap.returncode == 0, out
    listed = [ln for ln in out.splitlines() if ln.startswith("site/")]
    assert listed == ["site/other"]  # the family swapped the first module out
    assert MPI_MODULE in out.splitlines()
    assert "CMA=1" in out and "FAMILY=site" in out


def test_environment_modules_show_help_and_family_conflict(tmp_path, registry):
    init = modules_init()
    root, ctx = _tree(tmp_path, "tcl", registry)
    show = _bash(init, root, "module show site/advisor", tmp_path)
    text = show.stderr + show.stdout
    assert show.returncode == 0, text
    assert "family\t\thpc_advisor" in text
    for want in _expect_texts(ctx["prof"]):
        assert f"module-whatis\t{{{want}}}" in text
    helped = _bash(init, root, "module help site/advisor", tmp_path)
    htext = helped.stderr + helped.stdout
    assert "This module sets:" in htext and "(glibc malloc: madvise" in htext
    _users_only(htext)
    assert "# For site administrators" in (root / "site" / "advisor").read_text()
    assert f'prereq "{MPI_MODULE}"' in (root / "site" / "other").read_text()
    both = _bash(init, root, f"module load {MPI_MODULE} site/advisor; module load site/other; "
                 "module -t list", tmp_path)
    out = both.stdout + both.stderr
    assert "conflict" in out and "hpc_advisor" in out  # the family refuses a second one
    assert "site/other" not in [ln.strip() for ln in out.splitlines()]


@pytest.mark.parametrize("fmt", ["lmod", "tcl"])
def test_empty_module_is_an_error_saying_why(fmt, registry):
    prof = load_profile(SHIPPED_PROFILE)
    with pytest.raises(EmitError, match=f"nothing to write as {fmt}: 2 setting.s. only confirm "
                                        r"the library default \(--all writes them\)"):
        render(prof, fmt, registry, EmitOptions(plugins=frozenset({"mpich-cma"})))
    text = render(prof, fmt, registry, EmitOptions(plugins=frozenset({"mpich-cma"}),
                                                   include_defaults=True))
    assert "MPIR_CVAR_CH4_CMA_ENABLE" in text


def test_cli_empty_module_exits_2_with_one_line(tmp_path):
    """The issue's case: the shipped profile's mpich-cma advice only confirms the defaults."""
    prof = profile_made_here(tmp_path / "p.toml")
    proc = subprocess.run([sys.executable, "-m", "advisor", "emit", "-f", "lmod", "--plugin",
                           "mpich-cma", "--profile", str(prof)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.splitlines() == [
        f"advisor: error: {prof}: nothing to write as lmod: 2 setting(s) only confirm the "
        "library default (--all writes them)"]
