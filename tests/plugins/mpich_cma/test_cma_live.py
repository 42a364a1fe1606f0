"""Live tests: real sibling processes, real MPICH under mpiexec, real seccomp filters and user
namespaces.  They skip with a reason where a tool is missing (CI installs them)."""

from __future__ import annotations

import errno
import os
import shutil
import sys
import time

import pytest
from cma_support import CMA_DATA, env_lines

from advisor.models import Facts, MpiFacts
from advisor.probe import MeasureContext
from advisor_mpich_cma import evidence
from advisor_mpich_cma import recommend
from advisor_mpich_cma import usability
from advisor.models import Evidence
from advisor_mpich_cma import knobs
from advisor_mpich_cma.identity import cma_applicability, cvar_defaults, library_defaults
from advisor_mpich_cma.measure import smoke_evidence
from advisor_mpich_cma.plugin import CmaProbe
from advisor.measure.mpi.sibling import sibling_probe
from support import need_mpich_keeps_cma, tool

pytestmark = pytest.mark.integration

DENY = [sys.executable, "-m", "advisor.measure.mpi.deny_cma", "--"]


def _seccomp_works() -> None:
    from advisor.measure.mpi.deny_cma import install_filter  # noqa: F401

    try:
        import ctypes.util

        if not ctypes.util.find_library("seccomp"):
            import seccomp  # noqa: F401
    except ImportError:
        pytest.skip("libseccomp not installed (apt-get install libseccomp2 python3-seccomp)")


def test_sibling_probe_reads_a_sibling_not_a_child():
    r = sibling_probe()
    assert r["kind"] == "siblings"
    # reader and target are two children of this process: siblings
    assert r["reader"]["ppid"] == r["target"]["ppid"] == os.getpid()
    assert r["reader"]["pid"] != r["target"]["pid"]
    if r["result"] == "ok":
        assert r["verified"] is True  # the bytes read are the target's random bytes
    else:  # a machine where CMA is blocked: the errno is reported, not raised
        assert r["errno"] in (errno.EPERM, errno.EACCES, errno.ENOSYS)


def test_sibling_probe_under_seccomp_is_eperm_with_seccomp_cause():
    _seccomp_works()
    r = sibling_probe(wrap_reader=DENY)
    assert r["result"] == "EPERM" and r["errno"] == errno.EPERM
    assert r["reader"]["seccomp"] == 2
    from advisor.measure.mpi.causes import explain

    causes = explain(r["errno"], reader=r["reader"], target=r["target"])
    assert causes[0].code == "seccomp"


def test_sibling_probe_in_separate_user_namespace():
    unshare = shutil.which("unshare")
    if not unshare:
        pytest.skip("unshare (util-linux) not installed")
    r = sibling_probe(wrap_reader=[unshare, "--user"])
    if r["result"] == "error":
        pytest.skip(f"unprivileged user namespaces not available here: {r.get('error')}")
    assert r["result"] == "EPERM"
    assert r["reader"]["user_ns"] != r["target"]["user_ns"]
    from advisor.measure.mpi.causes import explain

    codes = [c.code for c in explain(r["errno"], reader=r["reader"], target=r["target"])]
    assert codes[0] == "user-namespace"


def test_identity_defaults_read_from_installed_library():
    mpivars = tool("mpivars")
    from advisor.libraries.mpich import run_mpivars

    cvars = cvar_defaults(run_mpivars(mpivars))
    assert knobs.CMA_ENABLE in cvars and knobs.CMA_THRESHOLD in cvars
    mpi = MpiFacts(implementation="mpich", flavour="upstream", version="5.0.2", device="ch4:ucx")
    d = library_defaults(mpi, cvars)
    assert d["source"] == "mpivars"
    assert d["threshold_bytes"] == int(cvars[knobs.CMA_THRESHOLD])
    assert cma_applicability(mpi, cvars)[0]


def test_applicability_reasons_for_libraries_without_cma():
    cvars = cvar_defaults((CMA_DATA / "mpivars-5.0.2.txt").read_text())
    ch3 = MpiFacts(implementation="mpich", version="4.3.2", device="ch3:nemesis")
    assert not cma_applicability(ch3, cvars)[0] and "ch3" in cma_applicability(ch3, cvars)[1]
    old = MpiFacts(implementation="mpich", version="4.2.3", device="ch4:ofi")
    assert "predates" in cma_applicability(old, None)[1]
    no_mod = {k: v for k, v in cvars.items() if k != knobs.CMA_ENABLE}
    ok, why = cma_applicability(MpiFacts(implementation="mpich", version="5.0.2"), no_mod)
    assert not ok and "no CMA module" in why
    ok, why = cma_applicability(MpiFacts(implementation="openmpi", version="5.0.3"), None)
    assert not ok and "not MPICH" in why


def test_check_on_this_machine_completes():
    tool("mpiexec")
    a = CmaProbe().check(Facts())
    ids = [e.id for e in a.evidence]
    assert ids[:2] == [evidence.LIBRARY, evidence.SIBLING]
    lib = a.evidence[0].values
    if lib.get("implementation") == "mpich" and a.evidence[1].values["result"] == "ok":
        assert evidence.SMOKE in ids
        smoke = [e for e in a.evidence if e.id == evidence.SMOKE][0]
        assert smoke.values["ok"] is True
        assert smoke.values["message_bytes"] > lib["threshold_default_bytes"]
        assert a.usable is True


def test_mpi_run_under_seccomp_fails_for_real_and_becomes_advice():
    """Both ranks under a filter that denies process_vm_readv: the MPI job dies with MPICH's
    own error, the probe records it, and recommend emits the explicit disable (MPICH 5)."""
    mpiexec = tool("mpiexec")
    need_mpich_keeps_cma()
    _seccomp_works()
    launcher = [mpiexec, "-n", "2", *DENY]
    ev = smoke_evidence("upstream", 8192, launcher=launcher, timeout_s=60)
    v = ev.values
    assert v["ok"] is False
    assert v["errno"] == errno.EPERM, v
    assert v.get("rank_seccomp") == 2
    assert "process_vm_readv" in v["error"]
    lib = evidence.Library("mpich", "upstream", "5.0.2", 1, 8192, "mpivars")
    facts = Facts.model_validate({"mpi": {"implementation": "mpich", "flavour": "upstream",
                                          "version": lib.version}})
    sib = Evidence(id=evidence.SIBLING, values={"result": "ok", "errno": 0})
    libev = Evidence(id=evidence.LIBRARY, values={"implementation": "mpich", "flavour": "upstream",
                                             "version": "5.0.2", "cma_enable_default": 1,
                                             "threshold_default_bytes": 8192,
                                             "defaults_source": "mpivars"})
    use = usability.usability([libev, sib, ev], facts)
    assert use.usable is False and use.causes[0].code == "seccomp"
    adv = recommend.recommend([libev, sib, ev], facts)
    assert f"{knobs.CMA_ENABLE}=0" in env_lines(adv)
    assert any(f.id == "cma-blocked" and "seccomp" in f.message for f in adv.findings)


def test_whole_probe_under_seccomp_profile_completes(tmp_path):
    """The whole check -> recommend path run in a process under the filter: usable is False
    with the seccomp cause, the explicit disable comes out, nothing raises."""
    tool("mpiexec")
    _seccomp_works()
    script = (
        "import json\n"
        "from advisor.models import Facts\n"
        "from advisor_mpich_cma.plugin import CmaProbe\n"
        "p = CmaProbe(); f = Facts()\n"
        "a = p.check(f)\n"
        "adv = p.recommend(a.evidence, f)\n"
        "print(json.dumps({'usable': a.usable, 'reason': a.reason,\n"
        "  'settings': [(s.name, s.value) for r in adv.recommendations for s in r.settings],\n"
        "  'findings': [x.id for x in adv.findings]}))\n")
    from advisor.measure import run_python

    res = run_python([*DENY[1:], sys.executable, "-c", script], timeout_s=120)
    assert res["usable"] is False
    assert "seccomp" in res["reason"]
    assert "cma-blocked" in res["findings"]
    assert [knobs.CMA_ENABLE, 0] in res["settings"]


def test_quick_measure_produces_a_sweep_with_buffer_kind():
    tool("mpiexec")
    probe = CmaProbe()
    facts = Facts()
    a = probe.check(facts)
    if not a.usable:
        pytest.skip(f"CMA not usable here: {a.reason}")
    ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 25, quick=True,
                         options={"sizes": "8192,262144", "repeats": "2", "target_s": "0.01"})
    t0 = time.monotonic()
    ev = probe.measure(ctx)
    assert time.monotonic() - t0 < 60
    # the paired in-launch mode (MPI_T) is the default now; separate launches only as fallback
    sweep = [e for e in ev if e.id.startswith((evidence.PAIRED, evidence.SWEEP))]
    assert sweep and sweep[0].conditions.buffer_kind == "pageable"
    assert sweep[0].conditions.buffer_fill == "random"
    names = {s.name for s in sweep[0].series}
    assert names == {"latency:cma-on", "latency:cma-off", "bandwidth:cma-on", "bandwidth:cma-off"}
    adv = probe.recommend(a.evidence + ev, facts)  # whatever the noise, it completes
    for r in adv.recommendations:
        for s in r.settings:
            assert s.name in (knobs.CMA_ENABLE, knobs.CMA_THRESHOLD)
            assert isinstance(s.value, int)


def test_mpi_ranks_in_separate_user_namespaces_fail_with_userns_cause():
    """Each rank in its own user namespace: MPICH 5 keeps CMA on (it only checks Yama) and the
    job dies with errno 1; the cause is the user namespaces, not Yama or seccomp."""
    mpiexec = tool("mpiexec")
    need_mpich_keeps_cma()
    unshare = shutil.which("unshare")
    if not unshare:
        pytest.skip("unshare (util-linux) not installed")
    probe = sibling_probe(wrap_reader=[unshare, "--user"])
    if probe["result"] == "error":
        pytest.skip(f"unprivileged user namespaces not available here: {probe.get('error')}")
    ev = smoke_evidence("upstream", 8192, launcher=[mpiexec, "-n", "2", unshare, "--user"],
                        timeout_s=60)
    v = ev.values
    assert v["ok"] is False and v["errno"] == errno.EPERM, v
    assert v["rank_user_ns_distinct"] is True
    facts = Facts.model_validate({"mpi": {"implementation": "mpich", "version": "5.0.2"}})
    use = usability.usability([Evidence(id=evidence.SIBLING, values={"result": "ok", "errno": 0}), ev], facts)
    assert not use.usable and use.causes[0].code == "user-namespace"


def test_cma_seccomp_profile_completes_through_cli(tmp_path, advisor_home):
    """`advisor probe` run under the deny-CMA filter writes a complete profile: mpich-cma is
    not applicable with the seccomp cause, and the explicit disable is in it (MPICH 5)."""
    import subprocess
    import tomllib

    tool("mpiexec")
    _seccomp_works()
    advisor = tool("advisor")
    out = tmp_path / "p.toml"
    done = subprocess.run([*DENY, advisor, "probe", "--plugin", "mpich-cma", "--quick",
                           "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    prof = tomllib.loads(out.read_text())
    res = [r for r in prof["results"] if r["probe"] == "mpich-cma"][0]
    assert res["status"] == "not-applicable" and "seccomp" in res["reason"]
    if prof["facts"].get("mpi", {}).get("version", "").startswith("5."):
        settings = [(s["name"], s["value"]) for r in res["recommendations"]
                    for s in r["settings"]]
        assert (knobs.CMA_ENABLE, 0) in settings


def test_launcher_that_cannot_start_is_not_blamed_on_cma(tmp_path):
    ev = smoke_evidence("upstream", 8192, launcher=[str(tmp_path / "no-mpiexec"), "-n", "2"],
                        timeout_s=30)
    assert ev.values["ok"] is False and ev.values["launch_failed"] is True
    facts = Facts.model_validate({"mpi": {"implementation": "mpich", "version": "5.0.2"}})
    sib = Evidence(id=evidence.SIBLING, values={"result": "ok", "errno": 0})
    adv = recommend.recommend([sib, ev], facts)
    assert not adv.recommendations
    assert not [f for f in adv.findings if f.id == "cma-blocked"]
    assert usability.usability([ev], facts).usable is False  # nothing ran: not tested


def test_probe_lint_flags_enable_only_where_cma_fails():
    probe = CmaProbe()
    facts = Facts.model_validate({"mpi": {"implementation": "mpich", "version": "5.0.2"}})
    found = probe.lint({knobs.CMA_ENABLE: "1"}, facts)
    if sibling_probe()["result"] == "ok":
        assert not [f for f in found if f.id == "cma-enable-blocked"]
    assert probe.lint({}, facts) == []
