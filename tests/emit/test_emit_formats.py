"""Unit tests of the emit formats: golden files, determinism, selection, safety, structure of the
Spack / EasyBuild / TOML / JSON outputs, fingerprint mismatch, and the field cases that concern
emit (cma-docker-seccomp, cvar-typos).

Golden files live in tests/emit/golden/; regenerate them with ``ADVISOR_UPDATE_GOLDEN=1``
after an intended change (the advisor version in headers is stored as ``@ADVISOR_VERSION@``).
"""

from __future__ import annotations

import ast
import json
import os
import re
import tomllib
from pathlib import Path

import pytest
import yaml

import advisor
from advisor.emit import dropped, render
from advisor.emit.decide import select
from advisor.errors import BadInputError, EmitError
from advisor.facts.compare import machine_mismatch
from advisor.models import (Facts, KernelFacts, MpiFacts, PluginResult, Recommendation,
                            SecurityFacts, Setting)
from advisor.libraries import builtin_libraries, version_of
from advisor.plugins import collect, make_plugin_manager
from advisor.specs.selection import EmitOptions
from emit_fixtures import HOSTILE, HOSTILE_EASYBUILD, expected_env, facts, hostile_for, make_profile, \
    standard_profile, standard_results
from support import case

LIBS = builtin_libraries()
GOLDEN = Path(__file__).resolve().parent / "golden"
FORMATS = ("env", "csh", "fish", "lmod", "tcl", "spack", "easybuild", "toml", "json")
ENV_FORMATS = ("env", "csh", "fish", "lmod", "tcl", "spack", "easybuild")
COMMENT = {"env": "#", "csh": "#", "fish": "#", "lmod": "--", "tcl": "#", "spack": "#",
           "easybuild": "#", "toml": "#"}


@pytest.fixture(scope="module")
def registry():
    return collect(make_plugin_manager(entry_points=False))


def emit(profile, fmt, registry, **opts) -> str:
    return render(profile, fmt, registry, EmitOptions(**opts))


def one_setting_profile(**setting):
    base = dict(library="test", name="ADVISOR_X", value="v")
    base.update(setting)
    res = PluginResult(plugin="p", probe="p", status="ok", recommendations=[Recommendation(
        id="r", title="t", rationale="why", confidence="low", settings=[Setting(**base)])])
    return make_profile([res])


# --------------------------------------------------------------------------- registry


def test_builtin_formats_registered_through_hook(registry):
    assert set(FORMATS) <= set(registry.emitters)
    for name in FORMATS:
        assert registry.emitters[name].plugin == "advisor.emit.builtin"
        assert registry.emitters[name].description


def test_third_party_format_through_same_hook():
    class Plugin:
        @advisor.hookimpl
        def advisor_register_emitters(self, register):
            register("names", lambda selection: "".join(
                src.setting.name + "\n" for src in selection.sources()), description="names only")

    reg = collect(make_plugin_manager(entry_points=False, plugins=[("third", Plugin())]))
    assert reg.emitters["names"].plugin == "third"
    text = render(standard_profile(), "names", reg, EmitOptions())
    # render hands third-party formats a selection without version-excluded settings
    assert "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE" not in text
    assert "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD" in text


def test_unknown_format_names_known_ones(registry):
    with pytest.raises(BadInputError) as err:
        emit(standard_profile(), "bashrc", registry)
    for name in FORMATS:
        assert name in str(err.value)


# --------------------------------------------------------------------------- golden files


def _normalise(text: str) -> str:
    return text.replace(f"hpc-advisor {advisor.__version__} from",
                        "hpc-advisor @ADVISOR_VERSION@ from").replace(
        f'"hpc-advisor {advisor.__version__}"', '"hpc-advisor @ADVISOR_VERSION@"')


@pytest.mark.parametrize("comments", [True, False], ids=["comments", "no-comments"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_golden(fmt, comments, registry):
    text = _normalise(emit(standard_profile(hostile=hostile_for(fmt)), fmt, registry,
                           comments=comments))
    path = GOLDEN / f"standard{'' if comments else '-nocomments'}.{fmt}"
    if os.environ.get("ADVISOR_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert text.encode("utf-8") == path.read_bytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_deterministic_and_order_independent(fmt, registry):
    h = hostile_for(fmt)
    a = emit(standard_profile(hostile=h), fmt, registry)
    b = emit(standard_profile(hostile=h), fmt, registry)
    c = emit(make_profile(list(reversed(standard_results(hostile=h)))), fmt, registry)
    assert a == b == c
    assert a.endswith("\n")


@pytest.mark.parametrize("fmt", FORMATS)
def test_header_has_provenance(fmt, registry):
    p = standard_profile(hostile=hostile_for(fmt))
    text = emit(p, fmt, registry)
    for needle in (advisor.__version__, p.fingerprint, p.provenance.created, "node001"):
        assert needle in text


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "json"])
def test_comments_are_single_lines_and_dropped_by_no_comments(fmt, registry):
    res = PluginResult(plugin="p", probe="p", status="ok", recommendations=[Recommendation(
        id="r", confidence="low", rationale="the full rationale stays in the profile",
        title="first line }{ \\\nEVIL_LINE=1 $(touch MARKER)\r\x1b[31m",
        settings=[Setting(library="test", name="ADVISOR_X", value="v")])])
    p = make_profile([res])
    with_c = emit(p, fmt, registry)
    without = emit(p, fmt, registry, comments=False)
    assert "first line" in with_c and "first line" not in without
    assert "EVIL_LINE" not in with_c  # only the first line of a title is used
    assert "\r" not in with_c and "\x1b" not in with_c
    marker = COMMENT[fmt]
    for line in with_c.splitlines():
        if fmt in ("lmod", "tcl") and "ADVISOR_X=v (first line" in line:
            continue  # the module's help text (a Lua long string, a Tcl puts in ModulesHelp)
        if "first line" in line and fmt != "toml":
            assert line.lstrip().startswith(marker)
            assert not line.rstrip().endswith("\\")


# --------------------------------------------------------------------------- selection


def _code(text: str) -> str:
    """``text`` without its comment lines (the left-out comment names what is not set)."""
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))


def test_all_adds_default_confirmations(registry):
    p = standard_profile()
    text = emit(p, "env", registry)
    assert "MPIR_CVAR_CH4_CMA_ENABLE" not in _code(text)
    assert ("# left out: MPIR_CVAR_CH4_CMA_ENABLE=1 (only confirms the library default; --all "
            "writes it)") in text
    text = emit(p, "env", registry, include_defaults=True)
    assert "MPIR_CVAR_CH4_CMA_ENABLE='1'; export MPIR_CVAR_CH4_CMA_ENABLE" in text


def test_plugin_filter(registry):
    text = emit(standard_profile(), "env", registry, plugins=frozenset({"mpich-cma"}))
    assert "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD" in text
    assert "GLIBC_TUNABLES" not in text and "DLAF_" not in text and "ADVISOR_T_" not in text


def test_versions_select_names_valid_for_recorded_library(registry):
    old = make_profile(standard_results(), facts(
        mpi=MpiFacts(implementation="mpich", flavour="upstream", version="4.3.2"),
        kernel=KernelFacts(glibc_version="2.31"),
        python_packages={"DLA-Future": "0.6.0"}))
    text = _code(emit(old, "env", registry, include_defaults=True))
    assert "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE='8192'" in text  # >=4.3,<5
    assert "MPIR_CVAR_CH4_CMA_ENABLE" not in text  # >=5.0
    assert "GLIBC_TUNABLES" not in text  # glibc.malloc.hugetlb needs >= 2.35
    assert "DLAF_UMPIRE" not in text  # since DLA-Future 0.7.0
    lines = dropped(select(old, registry, EmitOptions(include_defaults=True)))
    assert any("MPIR_CVAR_CH4_CMA_ENABLE" in ln and "4.3.2" in ln for ln in lines)
    assert any("GLIBC_TUNABLES" in ln for ln in lines)
    new = standard_profile()
    assert "IQUEUE_CELL_SIZE" not in _code(emit(new, "env", registry))
    assert any("IQUEUE_CELL_SIZE" in ln for ln in dropped(select(new, registry, EmitOptions())))


def test_cray_only_name_dropped_on_upstream_kept_on_cray(registry):
    up = standard_profile()
    assert "MPICH_SMP_SINGLE_COPY_SIZE" not in _code(emit(up, "env", registry))
    cray = make_profile(standard_results(), facts(
        mpi=MpiFacts(implementation="mpich", flavour="cray", version="8.1.17")))
    assert "MPICH_SMP_SINGLE_COPY_SIZE='16384'" in emit(cray, "env", registry)


def test_selection_drops_nothing_when_versions_are_unknown(registry):
    unknown = make_profile(standard_results(), facts(mpi=MpiFacts(), kernel=KernelFacts(),
                                                     python_packages={}))
    assert select(unknown, registry, EmitOptions()).dropped() == []  # unknown: keep every one
    p = standard_profile()
    kept = [c.setting.name for c in select(p, registry, EmitOptions()).chosen if c.drop is None]
    assert "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE" not in kept
    assert "MPIR_CVAR_CH4_CMA_ENABLE" in kept


def test_library_version():
    libs = builtin_libraries()

    def library_version(fx, name):
        return version_of(fx, name, libs)

    fx = facts(python_packages={"DLA_Future": "0.8.0"})
    assert library_version(fx, "mpich") == "5.0.2"
    assert library_version(fx, "glibc") == "2.36"
    assert library_version(fx, "dla-future") == "0.8.0"
    assert library_version(fx, "cupy") is None
    ompi = facts(mpi=MpiFacts(implementation="openmpi", version="5.0.3"))
    assert library_version(ompi, "mpich") is None


def test_list_items_from_several_settings_merge_once(registry):
    results = []
    for i, val in enumerate(["glibc.malloc.hugetlb=1", "glibc.malloc.hugetlb=1:glibc.a=2"]):
        results.append(PluginResult(plugin=f"p{i}", probe=f"p{i}", status="ok",
                                    recommendations=[Recommendation(
                                        id="r", title="t", rationale="why", confidence="low",
                                        settings=[Setting(library="glibc", name="GLIBC_TUNABLES",
                                                          value=val, separator=":")])]))
    text = emit(make_profile(results), "env", registry)
    assert "'glibc.malloc.hugetlb=1:glibc.a=2'" in text
    assert text.count("GLIBC_TUNABLES=") == 2  # the merge line: append branch and set branch


def test_conflicting_values_refused(registry):
    results = [PluginResult(plugin=f"p{i}", probe=f"p{i}", status="ok",
                            recommendations=[Recommendation(
                                id="r", title="t", rationale="why", confidence="low",
                                settings=[Setting(library="t", name="ADVISOR_X", value=v)])])
               for i, v in enumerate(["a", "b"])]
    with pytest.raises(EmitError, match="ADVISOR_X.*p0/r.*p1/r"):
        emit(make_profile(results), "env", registry)


# --------------------------------------------------------------------------- safety


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["1ABC", "A-B", "A B", "A=B", "A;B", "Ä", "$(x)"])
def test_bad_names_refused(fmt, name, registry):
    with pytest.raises(EmitError) as err:
        emit(one_setting_profile(name=name), fmt, registry)
    assert repr(name) in str(err.value) and "p/r" in str(err.value)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("value", ["a\nb", "tab\there", "nul\x00", "esc\x1b[0m", "del\x7f",
                                   "c1\x85", "cr\r", "\ud800"])
def test_control_characters_refused(fmt, value, registry):
    with pytest.raises(EmitError) as err:
        emit(one_setting_profile(value=value), fmt, registry)
    assert "ADVISOR_X" in str(err.value) and "control character" in str(err.value)


@pytest.mark.parametrize("fmt", ENV_FORMATS)
def test_bad_separator_refused(fmt, registry):
    with pytest.raises(EmitError, match="separator"):
        emit(one_setting_profile(value="a", separator="\n"), fmt, registry)


@pytest.mark.parametrize("value,text", [(True, "1"), (False, "0"), (16384, "16384"),
                                        (2**40, "1099511627776"), (0.5, "0.5")])
def test_scalar_rendering(value, text, registry):
    out = emit(one_setting_profile(value=value), "env", registry)
    assert f"ADVISOR_X='{text}'; export ADVISOR_X" in out


# --------------------------------------------------------------------------- Spack


SPACK_SECTIONS = {"set", "unset", "prepend_path", "append_path", "remove_path"}


def test_spack_output_has_documented_structure(registry):
    p = standard_profile()
    doc = yaml.safe_load(emit(p, "spack", registry))
    assert set(doc) == {"env_vars"}
    env_vars = doc["env_vars"]
    assert set(env_vars) <= SPACK_SECTIONS
    for section, mapping in env_vars.items():
        assert isinstance(mapping, dict)
        for key, val in mapping.items():
            assert re.match(r"^\w[\w-]*$", key) and isinstance(val, (str, int, float))
    want = expected_env(p)
    assert env_vars["append_path"] == {"GLIBC_TUNABLES": want.pop("GLIBC_TUNABLES")}
    assert env_vars["set"] == want  # hostile values round-trip through YAML exactly


def test_spack_non_colon_list_is_set_with_note(registry):
    p = one_setting_profile(name="ADVISOR_LIST", value="a,b", separator=",")
    text = emit(p, "spack", registry)
    assert yaml.safe_load(text)["env_vars"] == {"set": {"ADVISOR_LIST": "a,b"}}
    assert "overwrites" in text


def test_spack_escapes_yaml_line_breaks(registry):
    value = "x\u2028y\u2029z\ufeff" + "".join(HOSTILE.values())
    doc = yaml.safe_load(emit(one_setting_profile(value=value), "spack", registry))
    assert doc["env_vars"]["set"]["ADVISOR_X"] == value


def test_spack_empty_profile(registry):
    p = make_profile([])
    assert yaml.safe_load(emit(p, "spack", registry)) == {"env_vars": {}}


# --------------------------------------------------------------------------- EasyBuild


def _modextravars(text: str) -> dict:
    tree = ast.parse(text)
    assigns = [n for n in tree.body if isinstance(n, ast.Assign)]
    assert len(assigns) == 1 and assigns[0].targets[0].id == "modextravars"
    return ast.literal_eval(assigns[0].value)


def test_easybuild_output_is_python_literal(registry):
    p = standard_profile(hostile=hostile_for("easybuild"))
    text = emit(p, "easybuild", registry)
    assert _modextravars(text) == expected_env(p)
    assert "cannot append" in text  # the list variable says it overwrites
    assert _modextravars(emit(make_profile([]), "easybuild", registry)) == {}


def test_easybuild_refuses_template_references(registry):
    with pytest.raises(EmitError, match="ADVISOR_X.*%\\("):
        emit(one_setting_profile(value="%(version)s"), "easybuild", registry)


@pytest.mark.parametrize("name", sorted(set(HOSTILE) - set(HOSTILE_EASYBUILD)))
def test_easybuild_refuses_values_it_would_change(name, registry):
    """'$', '[', a backslash, both quote kinds, edge spaces: EasyBuild's modules would load
    something else or run it (tests/emit/test_emit_easybuild.py loads them)."""
    with pytest.raises(EmitError, match=f"setting p/r: {name}: value (holds|starts or ends)"):
        emit(one_setting_profile(name=name, value=HOSTILE[name]), "easybuild", registry)


# --------------------------------------------------------------------------- TOML / JSON


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_data_formats_parse(fmt, registry):
    p = standard_profile()
    text = emit(p, fmt, registry)
    doc = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    assert doc["advisor"]["fingerprint"] == p.fingerprint
    env = {s["name"]: s["env_value"] for s in doc["settings"] if s["kind"] == "env"}
    assert env == expected_env(p)
    by_name = {s["name"]: s for s in doc["settings"]}
    assert by_name["MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"]["value"] == 16384
    assert by_name["GLIBC_TUNABLES"]["separator"] == ":"
    assert by_name["QuickPool.alignment"]["kind"] == "config"
    bare = emit(p, fmt, registry, comments=False)
    doc = tomllib.loads(bare) if fmt == "toml" else json.loads(bare)
    assert all("rationale" not in s for s in doc["settings"])


# --------------------------------------------------------------------------- fingerprint


def test_same_machine_no_mismatch():
    p = standard_profile()
    assert machine_mismatch(p, p.facts, LIBS) == []
    # the hostname is not part of the fingerprint: a sibling node of a partition matches
    assert machine_mismatch(p, p.facts.model_copy(update={"hostname": "node002"}), LIBS) == []


def test_mpi_the_fast_detection_cannot_see_is_not_a_mismatch():
    """The fast detection reads only ``mpichversion``: on an Open MPI (or HPE Cray MPICH)
    machine it finds no MPI, so MPI is left out of the fingerprint comparison, as in
    ``same_machine`` (seen with a real Open MPI 5.0.11 profile: emit warned "another machine"
    on the machine that made it)."""
    from advisor.models import Profile

    p = standard_profile()
    ompi = p.facts.model_copy(update={"mpi": MpiFacts(
        implementation="openmpi", flavour="openmpi", version="5.0.11",
        library_version="Open MPI v5.0.11")})
    prof = Profile.model_validate({**p.model_dump(), "facts": ompi.model_dump(),
                                   "fingerprint": ompi.fingerprint()})
    here = p.facts.model_copy(update={"mpi": MpiFacts()})
    assert machine_mismatch(prof, here, LIBS) == []
    # a real hardware difference is still one, and MPI is not listed among its facts
    other = here.model_copy(update={"kernel": here.kernel.model_copy(
        update={"release": "6.99.0"})})
    text = "\n".join(machine_mismatch(prof, other, LIBS))
    assert "kernel.release" in text and "mpi." not in text
    # where MPICH is recorded, the fast detection sees it: a missing MPI is a difference
    assert machine_mismatch(p, here, LIBS)


def test_library_versions_mismatch():
    p = standard_profile()
    here = facts(mpi=MpiFacts(implementation="mpich", flavour="upstream", version="4.3.2"),
                 kernel=KernelFacts(system="Linux", release="6.1.0-28-amd64",
                                    glibc_version="2.39"),
                 python_packages={"dla-future": "0.9.0"})
    lines = machine_mismatch(p, here, LIBS)
    text = "\n".join(lines)
    assert "fingerprint" in text and p.fingerprint in text
    assert "MPI version: profile 5.0.2, this machine 4.3.2" in text
    assert "glibc version: profile 2.36, this machine 2.39" in text
    assert "dla-future version" in text


def _facts_from_case(c: dict) -> Facts:
    f = c["facts"]
    cap = int(f["cap_eff"], 16)
    return Facts(
        hostname="container",
        kernel=KernelFacts(system="Linux", release=f["kernel"]),
        mpi=MpiFacts(**f["mpi"]),
        security=SecurityFacts(ptrace_scope=f["yama_ptrace_scope"],
                               seccomp_mode=f["seccomp_mode"],
                               cap_sys_ptrace=bool(cap >> 19 & 1),  # CAP_SYS_PTRACE is bit 19
                               container=f["container"]))


def test_cma_docker_seccomp_profile_from_host_warns_in_container(registry):
    """A profile made on the host (CMA usable, so CMA_ENABLE=1 confirmed) emitted inside the
    container of case cma-docker-seccomp: the security facts that decide CMA differ, so emit
    warns (and ``--strict`` refuses), even though the fingerprint leaves security out."""
    c = case("cma-docker-seccomp")
    here = _facts_from_case(c)
    host = here.model_copy(update={"security": SecurityFacts(
        ptrace_scope=0, seccomp_mode=0, cap_sys_ptrace=True, container="none")})
    name, value = c["expect"]["must_not_emit"][0].split("=", 1)
    res = PluginResult(plugin="mpich-cma", probe="mpich-cma", status="ok", recommendations=[
        Recommendation(id="cma-on", title="CMA on", rationale="CMA works here",
                       confidence="high", settings=[
                           Setting(library="mpich", name=name, value=int(value), type="bool")])])
    p = make_profile([res], host)
    lines = machine_mismatch(p, here, LIBS)
    text = "\n".join(lines)
    assert "seccomp" in text and "CAP_SYS_PTRACE" in text and "container" in text
    assert p.fingerprint == here.fingerprint()  # the fingerprint alone would not have told
    # and for the variant where the capability is added, the capability line goes away
    var = c["variant"]["capability_added"]
    here2 = here.model_copy(update={"security": here.security.model_copy(
        update={"cap_sys_ptrace": bool(int(var["cap_eff"], 16) >> 19 & 1)})})
    assert not any("CAP_SYS_PTRACE" in ln for ln in machine_mismatch(p, here2, LIBS))


# --------------------------------------------------------------------------- cvar-typos


def test_cvar_typos_values_emitted_as_mpich_reads_them(registry):
    """Case cvar-typos: MPICH ignores ``yes`` for a boolean CVAR and ``16k`` for a byte size.
    Emit writes booleans as 0/1 and byte sizes as plain integers, in every env format."""
    c = case("cvar-typos")
    lines = c["env_file"]["text"].splitlines()
    bad = {}
    for key in ("line_2", "line_3"):
        line = lines[int(key.split("_")[1]) - 1]
        m = re.match(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        bad[m.group(1)] = m.group(2)
    bool_name, bytes_name = list(bad)
    m = re.match(r"^(\d+)([kKmMgG])$", bad[bytes_name])
    nbytes = int(m.group(1)) * 1024 ** ("kmg".index(m.group(2).lower()) + 1)
    res = PluginResult(plugin="mpich-cma", probe="mpich-cma", status="ok", recommendations=[
        Recommendation(id="r", title="t", rationale="why", confidence="high", settings=[
            Setting(library="mpich", name=bool_name, value=True, type="bool"),
            Setting(library="mpich", name=bytes_name, value=nbytes, type="bytes")])])
    p = make_profile([res])
    doc = json.loads(emit(p, "json", registry))
    got = {s["name"]: s["env_value"] for s in doc["settings"]}
    assert got[bool_name] == "1" and got[bool_name] != bad[bool_name]
    assert got[bytes_name] == str(nbytes) and got[bytes_name].isdigit()
    for fmt in ENV_FORMATS:
        text = emit(p, fmt, registry)
        for name, value in bad.items():
            assert value not in text.replace(name, "")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_numbers_refused(fmt, value, registry):
    with pytest.raises(EmitError, match="ADVISOR_X.*finite"):
        emit(one_setting_profile(value=value), fmt, registry)


def test_empty_list_setting_appends_nothing(registry):
    text = emit(one_setting_profile(name="GLIBC_TUNABLES", value="", separator=":"), "env",
                registry)
    assert "GLIBC_TUNABLES" not in text


def test_broken_third_party_format_reported_as_emit_error():
    class Plugin:
        @advisor.hookimpl
        def advisor_register_emitters(self, register):
            register("broken", lambda selection: 1 / 0)

    reg = collect(make_plugin_manager(entry_points=False, plugins=[("third", Plugin())]))
    with pytest.raises(EmitError, match="broken.*third.*ZeroDivisionError"):
        render(standard_profile(), "broken", reg, EmitOptions())


def test_left_out_notes_name_defaults_config_kinds_and_empty_selection(registry):
    from advisor.emit import left_out_notes

    def notes_of(prof, opts, fmt, kinds):
        return left_out_notes(select(prof, registry, opts, fmt), kinds)

    cfg = Setting(library="umpire", name="host.QuickPool.alignment", value=2097152,
                  kind="config", type="bytes")
    env = Setting(library="test", name="ADVISOR_X", value="1", default="1", is_default=True)
    res = PluginResult(plugin="p", probe="p", status="ok", recommendations=[Recommendation(
        id="r", title="t", rationale="why", confidence="low", settings=[cfg, env])])
    idle = PluginResult(plugin="q", probe="q", status="not-applicable", reason="no GPU")
    prof = make_profile([res, idle])
    notes = notes_of(prof, EmitOptions(), "env", ("env",))
    assert [lvl for lvl, _ in notes] == ["note", "note"]
    assert "ADVISOR_X" in notes[0][1] and "--all" in notes[0][1]
    assert "kind config have no env form" in notes[1][1] and "host.QuickPool" in notes[1][1]
    assert notes_of(prof, EmitOptions(include_defaults=True), "toml", ("env", "config")) == []
    (only,) = notes_of(prof, EmitOptions(plugins=frozenset({"q"})), "env", ("env",))
    assert "no settings to write" in only[1] and "q: not-applicable (no GPU)" in only[1]
