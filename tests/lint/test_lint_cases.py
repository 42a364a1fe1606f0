"""advisor lint on the field cases and against the real MPICH and glibc.

The cvar-typos case is checked line by line from the case file, once with the recorded ``mpivars``
output of the MPICH 5.0.2 wheel (hermetic) and once with the installed ``mpivars``; then the real
library is asked: every value lint calls invalid must make MPI_Init abort, the "ok" line must not.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from support import BUILTIN_LIBRARIES, case, recorded_catalogues, recorded_facts, tool

from advisor import lint
from advisor.models import Facts

UPSTREAM_502 = recorded_facts()
_recorded_catalogues = recorded_catalogues


def _by_line(findings):
    out: dict[int, list] = {}
    for f in findings:
        out.setdefault(f.line, []).append(f)
    return out


def _expected_kind(text: str) -> str:
    """Map the case's prose expectation to a finding id (names vs values)."""
    if text == "ok":
        return "ok"
    if "name" in text or "control variable" in text:
        return "unknown-name"
    if "value" in text:
        return "invalid-value"
    raise AssertionError(f"cannot read expectation {text!r}")


def _check_cvar_typos(findings, expect: dict) -> None:
    lines = _by_line(findings)
    keys = sorted((k for k in expect if re.fullmatch(r"line_\d+", k)), key=lambda k: int(k[5:]))
    assert keys, "case has no line_N expectations"
    for key in keys:
        no = int(key[5:])
        want = expect[key]
        kind = _expected_kind(want)
        got = lines.get(no, [])
        if kind == "ok":
            # a valid line may carry the info note that it equals the version's default
            got = [f for f in got if f.finding.id != "default-value"]
            assert got == [], f"line {no} should be clean, got {[f.finding.message for f in got]}"
            continue
        match = [f for f in got if f.finding.id == kind]
        assert match, f"line {no}: expected {kind} ({want!r}), got {[f.finding.id for f in got]}"
        assert all(f.severity in ("error", "warning") for f in match)
        assert all(f.finding.remedy for f in match), "every finding carries a remedy"
        m = re.search(r"did you mean (\S+)", want)
        if m:
            assert m.group(1) in match[0].finding.message
            assert match[0].finding.remedy.endswith(m.group(1))


def test_cvar_typos_recorded_mpivars_line_by_line():
    c = case("cvar-typos")
    entries = lint.parse_env_text(c["env_file"]["text"], path="cvar-typos.sh")
    # knobs=(): the names come from the library's own list, not from a built-in table
    findings = lint.lint_entries(entries, facts=UPSTREAM_502, knobs=(),
                                 catalogues=_recorded_catalogues(), libraries=BUILTIN_LIBRARIES)
    _check_cvar_typos(findings, c["expect"])
    assert lint.has_errors(findings)


def test_cvar_typos_installed_mpivars_line_by_line():
    tool("mpivars")
    from advisor.facts import detect

    c = case("cvar-typos")
    facts = detect(opencl=False)
    cats = lint.installed_catalogues(facts, libraries=BUILTIN_LIBRARIES)
    assert "mpich" in cats and len(cats["mpich"].entries) > 100
    entries = lint.parse_env_text(c["env_file"]["text"], path="cvar-typos.sh")
    _check_cvar_typos(lint.lint_entries(entries, facts=facts, catalogues=cats,
                                        libraries=BUILTIN_LIBRARIES), c["expect"])


def _mpi_init_ok(name: str, value: str) -> bool:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(lint.MPICH_PREFIXES)}
    env[name] = value
    done = subprocess.run([sys.executable, "-c", "from mpi4py import MPI; MPI.Init() if not "
                           "MPI.Is_initialized() else None; print('ok')"], env=env,
                          capture_output=True, text=True, timeout=60)
    return done.returncode == 0 and "ok" in done.stdout


def test_cvar_typos_the_library_agrees():
    """Lint's error on a value means MPI_Init aborts on it; a clean line initialises."""
    tool("mpivars")
    pytest.importorskip("mpi4py")
    c = case("cvar-typos")
    entries = lint.parse_env_text(c["env_file"]["text"], path="cvar-typos.sh")
    findings = lint.lint_entries(entries, facts=UPSTREAM_502, libraries=BUILTIN_LIBRARIES,
                                 catalogues=lint.installed_catalogues(libraries=BUILTIN_LIBRARIES))
    bad = {f.line for f in findings if f.finding.id == "invalid-value" and f.severity == "error"}
    clean = {int(k[5:]) for k, v in c["expect"].items() if k.startswith("line_") and v == "ok"}
    assert bad and clean
    by_line = {e.line: e for e in entries}
    for no in sorted(bad):
        assert not _mpi_init_ok(by_line[no].name, by_line[no].value), f"line {no}"
    for no in sorted(clean):
        assert _mpi_init_ok(by_line[no].name, by_line[no].value), f"line {no}"


def test_enum_cvar_values_from_mpivars():
    cats = _recorded_catalogues()
    entries = lint.parse_env_text("export MPIR_CVAR_BCAST_INTRA_ALGORITHM=binomal\n"
                                  "export MPIR_CVAR_BARRIER_INTRA_ALGORITHM=smp\n", path="a.sh")
    f = lint.lint_entries(entries, facts=UPSTREAM_502, catalogues=cats, libraries=BUILTIN_LIBRARIES)
    assert [(x.line, x.finding.id) for x in f] == [(1, "invalid-value")]
    assert "binomial" in f[0].finding.remedy


def test_glibc_tunables_items_from_the_installed_list():
    cats = _recorded_catalogues()
    entries = lint.parse_env_text(
        "GLIBC_TUNABLES=glibc.malloc.hugetlbb=1:glibc.rtld.nns=99:glibc.malloc.hugetlb=1\n",
        path="g.env")
    f = lint.lint_entries(entries, facts=UPSTREAM_502, catalogues=cats, libraries=BUILTIN_LIBRARIES)
    got = {(x.name, x.finding.id) for x in f}
    assert ("glibc.malloc.hugetlbb", "unknown-name") in got
    assert ("glibc.rtld.nns", "invalid-value") in got
    assert not any(x.name == "glibc.malloc.hugetlb" for x in f)
    assert "glibc.malloc.hugetlb" in next(x for x in f if x.name == "glibc.malloc.hugetlbb").finding.message


def test_renamed_names_dlaf_and_openmpi_vader():
    from advisor.plugins import load

    reg = load()
    text = ("export DLAF_UMPIRE_HOST_MEMORY_POOL_INITIAL_BYTES=1073741824\n"
            "export OMPI_MCA_btl_vader_single_copy_mechanism=cma\n"
            "export OMPI_MCA_btl_vader_eager_limit=4096\n")
    entries = lint.parse_env_text(text, path="r.sh")
    new = Facts(mpi={"implementation": "openmpi", "version": "5.0.2"},
                python_packages={"dla-future": "0.7.0"})
    f = lint.lint_entries(entries, facts=new, knobs=reg.knobs, libraries=BUILTIN_LIBRARIES)
    ids = {(x.line, x.finding.id, x.severity) for x in f}
    assert (2, "outdated-name", "error") in ids
    # 5.0.x still reads the vader names as aliases: a warning naming the 5.0 name, from the
    # library record's renamed prefix (no plugin), or the openmpi plugin's lint hook (its knob
    # records claim the name; there is no ompi_info list here)
    plugin = any(k.name == "OMPI_MCA_btl_vader_eager_limit" for k in reg.knobs)
    if plugin:
        f += [x for x in lint.lint_entries(entries, facts=new, knobs=reg.knobs,
                                           probes=reg.probes,
                                           libraries=BUILTIN_LIBRARIES) if x.line == 3]
        ids = {(x.line, x.finding.id, x.severity) for x in f}
    assert (3, "outdated-name", "warning") in ids
    assert "OMPI_MCA_btl_sm_eager_limit" in next(x for x in f if x.line == 3).finding.remedy
    if any(k.library == "dla-future" for k in reg.knobs):
        assert (1, "outdated-name", "error") in ids
        assert "INITIAL_BLOCK_BYTES" in next(x for x in f if x.line == 1).finding.remedy
    old = Facts(mpi={"implementation": "openmpi", "version": "4.1.6"})
    f_old = lint.lint_entries(entries[1:], facts=old, knobs=reg.knobs, libraries=BUILTIN_LIBRARIES)
    assert not [x for x in f_old if x.finding.id == "outdated-name"]


def test_duplicates_aliases_and_not_exported():
    cats = _recorded_catalogues()
    text = ("export MPIR_CVAR_CH4_CMA_ENABLE=1\n"
            "export MPICH_CH4_CMA_ENABLE=0\n"
            "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=8192\n"
            "export MPIR_CVAR_CH4_CMA_ENABLE=0\n")
    f = lint.lint_entries(lint.parse_env_text(text, path="d.sh"), facts=UPSTREAM_502, catalogues=cats,
                          libraries=BUILTIN_LIBRARIES)
    got = {(x.line, x.finding.id) for x in f}
    assert {(2, "duplicate"), (3, "not-exported"), (4, "duplicate")} <= got
    assert not lint.has_errors(f)
    # an env file in KEY=value form (Docker --env-file) has no export at all: not flagged
    f2 = lint.lint_entries(lint.parse_env_text("MPIR_CVAR_CH4_CMA_ENABLE=1\n", path="e.env"),
                           facts=UPSTREAM_502, catalogues=cats, libraries=BUILTIN_LIBRARIES)
    # ... only the note that 1 is MPICH 5.0's default for this CVAR
    assert [(x.finding.id, x.severity) for x in f2] == [("default-value", "info")]


def test_cray_names_on_upstream_are_flavour_mismatch():
    from advisor.plugins import load

    reg = load()
    if not any(k.name == "MPICH_SMP_SINGLE_COPY_MODE" for k in reg.knobs):
        pytest.skip("mpich-cma knob records not registered")
    entries = lint.parse_env_text("export MPICH_SMP_SINGLE_COPY_MODE=CMA\n", path="c.sh")
    f = lint.lint_entries(entries, facts=UPSTREAM_502, knobs=reg.knobs,
                          catalogues=_recorded_catalogues(), libraries=BUILTIN_LIBRARIES)
    assert [x.finding.id for x in f] == ["flavour-mismatch"]
