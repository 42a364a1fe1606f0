"""Test profiles for the emit tests, built from advisor.models.

Values are what the built-in plugins recommend on a real machine (MPICH 5.0.2 wheel, glibc 2.36
of Debian 12), plus hostile strings that must survive every consumer byte for byte.
"""

from __future__ import annotations

from advisor.models import (Facts, KernelFacts, MpiFacts, PluginResult, Profile, Provenance,
                            Recommendation, SecurityFacts, Setting)

#: Values that a shell, Lua or Tcl would interpret if quoted wrongly.
HOSTILE = {
    "ADVISOR_T_SQUOTE": "it's a 'quoted' value",
    "ADVISOR_T_DQUOTE": 'say "hi" ""',
    "ADVISOR_T_SUBST": "$(touch MARKER) ${HOME} $HOME",
    "ADVISOR_T_BACKTICK": "`touch MARKER`",
    "ADVISOR_T_SEMI": "a; touch MARKER; b",
    "ADVISOR_T_SPACES": "  two  spaces  and trailing  ",
    "ADVISOR_T_BACKSLASH": "back\\slash \\n \\\\ ends\\",
    "ADVISOR_T_UNICODE": "Grüße – 東京 – 🚀",
    "ADVISOR_T_BRACES": "{unbalanced } [expr 1] {",
    "ADVISOR_T_BANG": "hello!world !! !$",
    "ADVISOR_T_PERCENT": "100% glob * ? ~user",
    "ADVISOR_T_EMPTY": "",
    "ADVISOR_T_DASH": "-n",
}

#: The hostile values EasyBuild carries into its Lua and Tcl modules unchanged (checked by
#: loading its generated modules, tests/emit/test_emit_easybuild.py); the others ('$NAME', '[',
#: a backslash, both quote kinds, leading or trailing spaces) are refused by the easybuild format.
HOSTILE_EASYBUILD = {k: HOSTILE[k] for k in (
    "ADVISOR_T_SQUOTE", "ADVISOR_T_DQUOTE", "ADVISOR_T_BACKTICK", "ADVISOR_T_SEMI",
    "ADVISOR_T_UNICODE", "ADVISOR_T_PERCENT", "ADVISOR_T_EMPTY", "ADVISOR_T_DASH",
    "ADVISOR_T_BANG")}


def facts(**over) -> Facts:
    base = dict(
        hostname="node001",
        kernel=KernelFacts(system="Linux", release="6.1.0-28-amd64", glibc_version="2.36"),
        mpi=MpiFacts(implementation="mpich", flavour="upstream", version="5.0.2",
                     device="ch4:ofi"),
        security=SecurityFacts(ptrace_scope=0, seccomp_mode=0, cap_sys_ptrace=False,
                               container="none"),
        python_packages={"dla-future": "0.8.0", "mpi4py": "4.1.1"},
    )
    base.update(over)
    return Facts(**base)


def make_profile(results: list[PluginResult], fx: Facts | None = None) -> Profile:
    fx = fx or facts()
    return Profile(
        provenance=Provenance(advisor_version="0.1.0", command="advisor probe",
                              created="2026-11-30T03:00:00Z", duration_s=12.5, hostname="node001"),
        fingerprint=fx.fingerprint(), facts=fx, results=results)


def standard_results(hostile: bool | dict[str, str] = True,
                     tunables: str = "glibc.malloc.hugetlb=1"):
    mpich = PluginResult(
        plugin="mpich-cma", probe="mpich-cma", status="ok",
        recommendations=[
            Recommendation(
                id="cma-threshold", title="CMA threshold at the measured crossover",
                rationale="CMA beats the POSIX two-copy path from 16 KiB up on this node.\n"
                          "Second line is not part of the comment.",
                confidence="high",
                settings=[
                    Setting(library="mpich", name="MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
                            value=16384, type="bytes", unit="bytes", default=8192,
                            versions=">=4.3"),
                    Setting(library="mpich", name="MPIR_CVAR_CH4_CMA_ENABLE", value=True,
                            type="bool", default=True, versions=">=5.0", is_default=True),
                    # only valid for 4.3.x: dropped for MPICH 5.0.2
                    Setting(library="mpich", name="MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE",
                            value=8192, type="bytes", versions=">=4.3,<5"),
                    # Cray-only name: dropped on upstream MPICH
                    Setting(library="mpich", flavour="cray", name="MPICH_SMP_SINGLE_COPY_SIZE",
                            value=16384, type="bytes"),
                ]),
        ])
    host = PluginResult(
        plugin="host-buffer", probe="host-buffer", status="ok",
        recommendations=[
            Recommendation(
                id="thp-malloc", title="Huge pages for malloc",
                rationale="THP is in madvise mode; glibc >= 2.35 can madvise malloc arenas.",
                confidence="medium",
                settings=[Setting(library="glibc", name="GLIBC_TUNABLES", value=tunables,
                                  type="list", separator=":", versions=">=2.35")]),
        ])
    pool = PluginResult(
        plugin="memory-pool", probe="memory-pool", status="ok",
        recommendations=[
            Recommendation(
                id="dlaf-alignment", title="2 MiB pool alignment",
                rationale="Backing blocks that are not a multiple of 2 MiB make first use 100x "
                          "slower (LLNL/Umpire#881).",
                confidence="high",
                settings=[
                    Setting(library="dla-future",
                            name="DLAF_UMPIRE_DEVICE_MEMORY_POOL_ALIGNMENT_BYTES",
                            value=2097152, type="bytes", unit="bytes", default=16,
                            versions=">=0.7.0"),
                    Setting(library="umpire", name="QuickPool.alignment", value=2097152,
                            type="bytes", kind="config"),
                ]),
        ])
    results = [mpich, host, pool]
    if hostile:
        results.append(PluginResult(
            plugin="hostile", probe="hostile", status="ok",
            recommendations=[Recommendation(
                id="hostile-values", title="values that must survive quoting",
                rationale="Rationale with 'quotes', $(touch MARKER), {braces} and a \\ backslash!",
                confidence="low",
                settings=[Setting(library="test", name=k, value=v) for k, v in
                          (hostile if isinstance(hostile, dict) else HOSTILE).items()],
            )]))
    return results


def standard_profile(**kw) -> Profile:
    return make_profile(standard_results(**kw))


#: The hostile values Lmod and Environment Modules deliver unchanged to every shell they serve
#: (tcsh, bash, zsh, fish; ``advisor.formats.quoting.MODULE_MANGLED``): the others ('!', braces,
#: brackets, '~') are refused by the lmod and tcl formats.
HOSTILE_MODULES = {k: HOSTILE[k] for k in (
    "ADVISOR_T_SQUOTE", "ADVISOR_T_DQUOTE", "ADVISOR_T_BACKTICK", "ADVISOR_T_SEMI",
    "ADVISOR_T_SPACES", "ADVISOR_T_BACKSLASH", "ADVISOR_T_UNICODE", "ADVISOR_T_EMPTY",
    "ADVISOR_T_DASH")}


def hostile_for(fmt: str) -> bool | dict[str, str]:
    """The ``hostile`` argument of ``standard_results`` for format ``fmt``: every hostile value,
    or the ones the format carries (``HOSTILE_EASYBUILD``, ``HOSTILE_MODULES``)."""
    if fmt == "easybuild":
        return HOSTILE_EASYBUILD
    return HOSTILE_MODULES if fmt in ("lmod", "tcl") else True


def expected_env(profile: Profile, include_defaults: bool = False) -> dict[str, str]:
    """What the environment must hold after loading: recomputed from the settings themselves
    (not from the emitter's own helpers), for the GLIBC_TUNABLES unset case."""
    out = {}
    for _res, _rec, s in profile.settings(include_defaults=include_defaults):
        if s.name in ("MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", "MPICH_SMP_SINGLE_COPY_SIZE"):
            continue
        v = s.value
        out[s.name] = ("1" if v else "0") if isinstance(v, bool) else str(v)
    return out
