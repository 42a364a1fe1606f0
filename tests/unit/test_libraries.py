"""The libraries seam: records, one version answer, MPICH's committed CVAR history, family-bound
suggestions, glibc's base-0 numbers, emit's version filter, owner-not-loaded, one mpivars reader.

Pure logic on recorded data: the committed history (advisor/libraries/data, made from each
MPICH wheel's mpivars), the recorded mpivars/ld.so lists and facts of tests/support.py."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support import BUILTIN_LIBRARIES, MPIVARS_502, recorded_catalogues, recorded_facts

from advisor import hookimpl, lint
from advisor.libraries.reads import drop_reason
from advisor.knobs import Knob
from advisor.libraries import Library, builtin_libraries, version_of
from advisor.libraries import mpich
from advisor.libraries.names import suggest_in_family
from advisor.models import Facts, Setting
from advisor.plugins import PluginIssue, collect, make_plugin_manager

REPO = Path(__file__).resolve().parents[2]
FACTS_502 = recorded_facts()


def _lint(text: str, facts: Facts = FACTS_502, **kw):
    kw.setdefault("libraries", BUILTIN_LIBRARIES)
    return lint.lint_entries(lint.parse_env_text(text, path="t.sh"), facts=facts,
                             catalogues=kw.pop("catalogues", recorded_catalogues()), **kw)


def test_history_covers_the_releases_users_run():
    h = mpich.history()
    assert {"4.1", "4.2", "4.3", "5.0"} <= set(h.releases)
    assert h.versions["5.0"] == "5.0.2" and len(h.releases["5.0"]) > 400
    # the 5.0 file agrees with the recorded mpivars of the 5.0.2 wheel, default by default
    cat = mpich.parse_mpivars(MPIVARS_502.read_text())
    assert {n: (e.type, e.default, e.category) for n, e in cat.entries.items()} == {
        n: (i.type, i.default, i.family) for n, i in h.releases["5.0"].items()}


def test_a_43_only_name_linted_against_50_is_renamed_or_removed():
    text = ("export MPIR_CVAR_DEBUG_PROGRESS_TIMEOUT=10\n"
            "export MPIR_CVAR_CH4_OFI_ENABLE_GPU_PIPELINE=1\n"
            "export MPICH_DEBUG_PROGRESS_TIMEOUT=10\n")
    f = _lint(text)
    by_line = {}
    for x in f:
        by_line.setdefault(x.line, x)
    assert by_line[1].finding.id == "outdated-name" and by_line[1].severity == "error"
    assert "renamed in mpich 5.0 -> MPIR_CVAR_PROGRESS_TIMEOUT" in by_line[1].finding.message
    assert by_line[2].finding.id == "removed-name"
    assert "removed in mpich 5.0 (see family CH4_OFI)" in by_line[2].finding.message
    # answered in the prefix the file used
    assert "-> MPICH_PROGRESS_TIMEOUT" in by_line[3].finding.message
    # the same file against 4.3: both names are read there
    f43 = _lint(text, Facts(mpi={"implementation": "mpich", "flavour": "upstream",
                                 "version": "4.3.2"}), catalogues={})
    assert {x.finding.id for x in f43 if x.severity in ("error", "warning")} == {"duplicate"}


def test_a_50_only_name_against_43_and_the_default_note():
    f = _lint("export MPIR_CVAR_PROGRESS_TIMEOUT=5\n",
              Facts(mpi={"implementation": "mpich", "version": "4.3.2"}), catalogues={})
    assert [(x.finding.id, x.severity) for x in f] == [("wrong-version", "error")]
    assert "added in mpich 5.0" in f[0].finding.message
    f = _lint("export MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=8192\n")
    assert [(x.finding.id, x.severity) for x in f] == [("default-value", "info")]
    assert "equals this version's default" in f[0].finding.message
    # 16384 was 4.3's default: on 5.0 it is a real change, no note
    assert _lint("export MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=16384\n") == []


def test_suggestions_never_cross_a_family_or_a_role():
    pool = {n: i.family for n, i in mpich.history().releases["5.0"].items()}
    checked = 0
    for name in sorted(pool):
        suffix = name[len("MPIR_CVAR_"):]
        for typo in (suffix[:-2] + suffix[-1], suffix[:5] + suffix[6:]):
            got = suggest_in_family("MPIR_CVAR_" + typo, pool, "MPIR_CVAR_",
                                    family=pool[name])
            checked += 1
            for g in got:
                assert pool[g] == pool[name], (typo, g)
                assert g.split("_")[2] == name.split("_")[2]
    assert checked > 800
    # an _ENABLE is never offered for a _THRESHOLD, however close the rest is
    f = _lint("export MPIR_CVAR_CH4_IPC_CMA_P2P_ENABLE=1\n")
    assert f and "did you mean" not in f[0].finding.message
    # the cvar-typos slip is still answered
    f = _lint("export MPIR_CVAR_CH4_IPC_CMA_P2P_TRESHOLD=16384\n")
    assert "did you mean MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD " in f[0].finding.message


def test_glibc_octal_is_a_number_not_an_error():
    reg = collect(make_plugin_manager())
    assert any(k.name == "glibc.cpu.x86_non_temporal_threshold" for k in reg.knobs)
    for value in ("0400000000", "0x4000000", "67108864"):
        f = _lint(f"export GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold={value}\n",
                  knobs=reg.knobs)
        assert not [x for x in f if x.finding.id == "invalid-value"], (value, f)
        octal = [x for x in f if x.severity == "info" and "octal" in x.finding.message]
        # legal but easy to misread: an info line says what glibc reads (64 MiB here)
        assert bool(octal) == (value == "0400000000"), (value, f)
        if octal:
            assert "67108864 (64 MiB)" in octal[0].finding.message
    f = _lint("export GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold=08\n", knobs=reg.knobs)
    assert [x.finding.id for x in f] == ["invalid-value"]


def test_one_version_answer_for_emit_and_lint():
    """emit and lint have no version function of their own: both ask ``version_of``."""
    unknown_impl = Facts(mpi={"version": "4.3.2"}, python_packages={"cupy-cuda12x": "13.3.0"})

    def fn(facts, name):
        return version_of(facts, name, BUILTIN_LIBRARIES)

    assert fn(unknown_impl, "mpich") == "4.3.2"
    assert fn(unknown_impl, "cupy") == "13.3.0"
    assert fn(Facts(mpi={"implementation": "openmpi", "version": "5.0.2"}), "mpich") is None
    assert fn(FACTS_502, "glibc") == "2.36"


class _VendorPlugin:
    """A third-party plugin that gives its non-Python library's version from its facts."""

    @hookimpl
    def advisor_register_libraries(self, register):
        register(Library(name="vendor", prefixes=("VENDOR_",),
                         version=lambda facts: facts.extra.get("vendor", {}).get("version")))

    @hookimpl
    def advisor_register_knobs(self, register):
        register(Knob(library="vendor", name="VENDOR_COPY_MODE", type="enum",
                      allowed=["fast", "safe"], versions=">=2.0", source="vendor manual"))


def test_a_plugin_library_version_enforces_its_knob_ranges():
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("vendor", _VendorPlugin())]))
    assert reg.plugin_of("library", "vendor") == "vendor"
    old = Facts(extra={"vendor": {"version": "1.4"}})
    f = lint.lint_entries(lint.parse_env_text("export VENDOR_COPY_MODE=fast\n", path="v.sh"),
                          facts=old, knobs=reg.knobs, libraries=reg.libraries)
    assert [x.finding.id for x in f] == ["wrong-version"]
    s = Setting(library="vendor", name="VENDOR_COPY_MODE", value="fast")
    assert "vendor >=2.0" in drop_reason(s, old, reg.knobs, reg.libraries)
    assert drop_reason(s, Facts(extra={"vendor": {"version": "2.1"}}), reg.knobs,
                       reg.libraries) is None


def test_emit_drops_names_the_recorded_release_does_not_read():
    gone = Setting(library="mpich", name="MPIR_CVAR_CH4_OFI_ENABLE_GPU_PIPELINE", value=1)
    assert "removed in 5.0" in drop_reason(gone, FACTS_502, (), BUILTIN_LIBRARIES)
    assert drop_reason(gone, Facts(mpi={"implementation": "mpich", "version": "4.3.2"}), (),
                       BUILTIN_LIBRARIES) is None
    cray = Facts(mpi={"implementation": "mpich", "flavour": "cray", "version": "5.0.2"})
    assert drop_reason(gone, cray, (), BUILTIN_LIBRARIES) is None  # upstream names only


def test_duplicate_and_malformed_libraries_are_plugin_errors():
    class Dup:
        @hookimpl
        def advisor_register_libraries(self, register):
            register(Library(name="mpich"))

    class Bad:
        @hookimpl
        def advisor_register_libraries(self, register):
            register(Library(name="Not Normalised"))

    reg = collect(make_plugin_manager(entry_points=False, plugins=[("dup", Dup()),
                                                                   ("bad", Bad())]))
    issues = {i.plugin: i.error for i in reg.issues}
    assert "already registered by advisor.libraries.mpich" in issues["dup"]
    assert "must match" in issues["bad"]
    assert reg.libraries["mpich"].history is not None
    # built-in records are blockable by name
    reg = collect(make_plugin_manager(entry_points=False, disable=["advisor.libraries.openmpi"]))
    assert "openmpi" not in reg.libraries and "mpich" in reg.libraries


def test_owner_not_loaded_is_an_error_naming_the_plugin():
    issue = PluginIssue("vendor", "import", "ModuleNotFoundError: No module named 'vendor_sdk'")
    entries = lint.parse_env_text("export VENDOR_COPY_MODE=bogus\nexport MPIR_CVAR_CH4_CMA_ENABLE=1\n",
                                  path="v.sh")
    f = lint.lint_entries(entries, facts=FACTS_502, catalogues=recorded_catalogues(),
                          issues=[issue], libraries=BUILTIN_LIBRARIES)
    own = [x for x in f if x.finding.id == "owner-not-loaded"]
    assert len(own) == 1 and own[0].severity == "error" and own[0].line == 1
    assert "VENDOR_COPY_MODE" in own[0].finding.message
    assert "plugin vendor failed to load" in own[0].finding.message
    assert "vendor_sdk" in own[0].finding.message
    assert lint.has_errors(f)
    # nothing unclaimed, or no broken plugin: no such finding
    assert not [x for x in lint.lint_entries(entries[1:], facts=FACTS_502, issues=[issue],
                                             libraries=BUILTIN_LIBRARIES)
                if x.finding.id == "owner-not-loaded"]
    assert not [x for x in lint.lint_entries(entries, facts=FACTS_502, libraries=BUILTIN_LIBRARIES)
                if x.finding.id == "owner-not-loaded"]


def test_mpich_name_only_in_its_library_module_and_data():
    done = subprocess.run(["grep", "-rn", '"mpich"', "advisor"], cwd=REPO, capture_output=True,
                          text=True)
    files = {line.split(":", 1)[0] for line in done.stdout.splitlines()}
    # data: the CVAR history and the shipped profiles (measured on MPICH machines)
    assert files <= {"advisor/libraries/mpich.py"} | {
        f for f in files if f.startswith(("advisor/libraries/data/", "advisor/shipped/"))
        and f.endswith((".json", ".toml"))}, done.stdout


def test_one_mpivars_reader():
    from advisor_mpich_cma import identity

    text = MPIVARS_502.read_text()
    assert identity.cvar_defaults(text) == {
        n: e.default for n, e in mpich.parse_mpivars(text).entries.items()}
    readers = []
    for path in [*(REPO / "advisor").rglob("*.py"), *(REPO / "plugins").rglob("*.py")]:
        src = path.read_text()
        if re.search(r"re\.compile\([^)]*MPIR_CVAR", src):
            readers.append(str(path.relative_to(REPO)))
    assert readers == ["advisor/libraries/mpich.py"]


@pytest.mark.parametrize("name", sorted(builtin_libraries()))
def test_builtin_records_validate(name):
    builtin_libraries()[name].validate()
