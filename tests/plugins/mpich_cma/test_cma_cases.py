"""Every field case of the mpich-cma plugin, expected values loaded from tests/cases."""

from __future__ import annotations

import re

import pytest
from cma_support import (advice_text, all_settings, env_lines, facts_from_case, sibling_ev)

from advisor.models import Evidence
from advisor_mpich_cma import evidence
from advisor_mpich_cma import lint
from advisor_mpich_cma import recommend
from advisor_mpich_cma import usability
from advisor_mpich_cma import knobs
from advisor.measure.mpi.causes import (classify_log, kernel_allows_sibling_attach,
                                        seccomp_profile_allows_cma)
from advisor_mpich_cma.identity import mpich_init_keeps_cma
from support import case


def top(c: dict, key: str):
    """A case key written after ``[case]`` in its file lands inside that table in TOML."""
    return c[key] if key in c else c["case"][key]

# --------------------------------------------------------------------------- cma-docker-seccomp


def test_cma_docker_seccomp_blocked():
    c = case("cma-docker-seccomp")
    facts = facts_from_case(c["facts"])
    ev = [sibling_ev(c["probe"]["sibling_process_vm_readv"])]
    use = usability.usability(ev, facts)
    assert use.usable is c["expect"]["cma_usable"]
    for word in c["expect"]["reason_mentions"]:
        assert word in use.reason, (word, use.reason)
    adv = recommend.recommend(ev, facts)
    text = advice_text(adv)
    for remedy in c["expect"]["remedies"]:
        assert remedy in text, remedy
    lines = env_lines(adv)
    for bad in c["expect"]["must_not_emit"]:
        assert bad not in lines
    assert any(f.id == "cma-blocked" for f in adv.findings)


def test_cma_docker_seccomp_capability_added():
    c = case("cma-docker-seccomp")
    var = c["variant"]["capability_added"]
    facts = facts_from_case(c["facts"], cap_eff=var["cap_eff"])
    assert facts.security.cap_sys_ptrace is True
    use = usability.usability([sibling_ev(var["sibling_process_vm_readv"])], facts)
    assert use.usable is var["expect_cma_usable"]


def test_cma_docker_seccomp_same_kind_on_mpich5():
    """The same blocked container with MPICH 5 (CMA on by default): the explicit disable."""
    c = case("cma-docker-seccomp")
    facts = facts_from_case(c["facts"], yama_ptrace_scope=0,
                            mpi={"implementation": "mpich", "version": "5.0.2"})
    adv = recommend.recommend([sibling_ev(c["probe"]["sibling_process_vm_readv"])], facts)
    assert (knobs.CMA_ENABLE, 0) in all_settings(adv)
    for bad in c["expect"]["must_not_emit"]:
        assert bad not in env_lines(adv)


# --------------------------------------------------------------------------- cma-seccomp-matrix


def test_cma_seccomp_matrix_verdict_follows_live_probe():
    c = case("cma-seccomp-matrix")
    assert c["expect"]["verdict_follows"] == "live probe"
    for runtime, _profile, kernel, cap, probe in top(c, "rows"):
        facts = facts_from_case({"container": runtime, "kernel": kernel, "seccomp_mode": 2,
                                 "cap_sys_ptrace": cap, "mpi": {"implementation": "mpich",
                                                                "version": "5.0.2"}})
        use = usability.usability([sibling_ev(probe)], facts)
        assert use.usable is (probe == "ok"), (runtime, kernel, cap, probe)
        if probe != "ok":
            assert "seccomp" in use.reason


def _docker_profile(name: str) -> dict:
    """A Docker-format profile with moby#42083's two rules, under the given syscall name."""
    return {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": [name, "process_vm_writev"], "action": "SCMP_ACT_ALLOW",
         "includes": {"minKernel": "4.8"}},
        {"names": [name, "process_vm_writev"], "action": "SCMP_ACT_ALLOW",
         "includes": {"caps": ["CAP_SYS_PTRACE"]}}]}


def test_cma_seccomp_matrix_profile_explains_and_probe_wins():
    c = case("cma-seccomp-matrix")
    misspelt = re.search(r"e\.g\. (\w+)", c["expect"]["misspelt_allow_rule"]).group(1)
    good = _docker_profile("process_vm_readv")
    assert seccomp_profile_allows_cma(good, kernel_release="5.15") is True
    assert seccomp_profile_allows_cma(good, kernel_release="4.4") is False
    assert seccomp_profile_allows_cma(good, kernel_release="4.4", caps=["SYS_PTRACE"]) is True
    assert seccomp_profile_allows_cma(_docker_profile(misspelt), kernel_release="5.15") is False
    # the profile says allowed, the live probe says EPERM: trust the probe and say so
    facts = facts_from_case({"container": "containerd", "kernel": "5.15", "seccomp_mode": 2})
    use = usability.usability([sibling_ev("EPERM")], facts, profile_allows=True)
    assert use.usable is False
    assert "trusting the live probe" in use.reason


# --------------------------------------------------------------------------- cma-yama-siblings


def test_cma_yama_siblings():
    c = case("cma-yama-siblings")
    facts = facts_from_case(c["facts"])
    probe = c["probe"]
    ev = [sibling_ev(probe["sibling_reads_sibling"], parent=probe["parent_reads_child"])]
    use = usability.usability(ev, facts)
    assert use.usable is c["expect"]["cma_usable"]
    for word in c["expect"]["reason_mentions"]:
        assert word in use.reason, (word, use.reason)
    text = advice_text(recommend.recommend(ev, facts))
    for remedy in c["expect"]["remedies"]:
        key = remedy.split(" (")[0]  # the command itself; the parenthesis is the case's note
        assert key in text, remedy
    assert "security trade-off" in text


def test_cma_yama_siblings_parent_child_is_not_enough():
    """A parent->child success must not make CMA usable (the probe design of the case)."""
    c = case("cma-yama-siblings")
    facts = facts_from_case(c["facts"])
    parent_only = [sibling_ev(c["probe"]["parent_reads_child"])]
    assert usability.usability(parent_only, facts).usable  # what a parent->child probe would claim
    both = [sibling_ev(c["probe"]["sibling_reads_sibling"],
                       parent=c["probe"]["parent_reads_child"])]
    assert usability.usability(both, facts).usable is False


# --------------------------------------------------------------------------- cma-yama-truth-table


def test_cma_yama_truth_table_exact():
    c = case("cma-yama-truth-table")
    assert c["expect"]["table_reproduced_exactly"]
    for scope, cap, allowed in top(c, "truth_table"):
        s = None if scope == "absent" else int(scope)
        assert kernel_allows_sibling_attach(s, cap) is allowed, (scope, cap)


def test_cma_yama_truth_table_mpich_init():
    c = case("cma-yama-truth-table")
    keep = c["mpich_init_behaviour"]["forces_cma_off_unless_scope_in"]
    for scope, _cap, _allowed in top(c, "truth_table"):
        s = None if scope == "absent" else int(scope)
        assert mpich_init_keeps_cma(s) is (scope in keep), scope


def test_cma_yama_truth_table_explicit_enable_on_scope1_is_overridden():
    from advisor_mpich_cma.lint import lint_env

    c = case("cma-yama-truth-table")
    setting = re.search(r"(MPIR_CVAR_CH4_CMA_ENABLE)=(\d)", c["expect"]["explicit_enable_on_scope1"])
    facts = facts_from_case({"yama_ptrace_scope": 1, "cap_sys_ptrace": True,
                             "mpi": {"implementation": "mpich", "version": "5.0.2"}})
    for name in [setting.group(1), *knobs.knob(setting.group(1)).aliases]:
        found = lint_env({name: setting.group(2)}, facts)
        assert [f.id for f in found] == ["cma-enable-overridden"], name
        assert "no effect" in found[0].message
    scope0 = facts_from_case({"yama_ptrace_scope": 0,
                              "mpi": {"implementation": "mpich", "version": "5.0.2"}})
    assert lint_env({setting.group(1): setting.group(2)}, scope0) == []


def test_cma_yama_truth_table_threshold_default_from_library():
    """Defaults come from the installed library (mpivars), the table only as labelled fallback;
    the threshold is a plain integer number of bytes."""
    from cma_support import CMA_DATA

    from advisor.models import MpiFacts
    from advisor_mpich_cma.identity import SOURCE_MPIVARS, SOURCE_TABLE, library_defaults, \
        cvar_defaults

    c = case("cma-yama-truth-table")
    nums = [int(n) for n in re.findall(r"(\d{4,}) in (4\.3|5\.0)", c["expect"]["threshold_default"])
            for n in [n[0]]]
    cvars = cvar_defaults((CMA_DATA / "mpivars-5.0.2.txt").read_text())
    d = library_defaults(MpiFacts(implementation="mpich", version="5.0.2"), cvars)
    assert d["source"] == SOURCE_MPIVARS and d["threshold_bytes"] in nums
    # a library that says otherwise wins over the table
    doctored = dict(cvars, **{knobs.CMA_THRESHOLD: "12345"})
    assert library_defaults(MpiFacts(implementation="mpich", version="5.0.2"),
                            doctored)["threshold_bytes"] == 12345
    fb = library_defaults(MpiFacts(implementation="mpich", version="4.3.2"), None)
    assert fb["source"] == SOURCE_TABLE and fb["threshold_bytes"] in nums
    assert c["expect"]["threshold_format"] == "plain integer number of bytes"
    assert knobs.knob(knobs.CMA_THRESHOLD).type == "bytes"


# --------------------------------------------------------------------------- cray-xpmem-gpu


def _env(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_cray_xpmem_gpu_findings():
    from advisor_mpich_cma.lint import lint_env

    c = case("cray-xpmem-gpu")
    facts = facts_from_case(c["facts"])
    found = {f.id: f for f in lint_env(_env(c["env_file"]["text"]), facts)}
    assert "cma-xpmem-inert-gpu" in found
    msg = found["cma-xpmem-inert-gpu"].message
    assert "inert" in c["expect"]["finding_1"] and "inert" in msg
    assert "MPICH_GPU_SUPPORT_ENABLED=1" in msg and "effective mode is CMA" in msg
    assert "cma-xpmem-no-device" in found  # finding_2: XPMEM cannot work without the device
    assert knobs.knob(knobs.CRAY_MODE).allowed == c["expect"]["valid_mode_values"]


def test_cray_xpmem_gpu_settings_family_and_never_xpmem():
    c = case("cray-xpmem-gpu")
    facts = facts_from_case(c["facts"])
    from cma_support import load_evidence

    # a usable CMA with a recorded sweep, recommended for a Cray library: Cray names only
    ev = [e for e in load_evidence("sweep-5.0.2") if e.id != evidence.LIBRARY]
    adv = recommend.recommend(ev, facts)
    names = [n for n, _ in all_settings(adv)]
    assert names, "expected a recommendation on the recorded sweep"
    family = re.findall(r"MPICH_SMP_SINGLE_COPY_\w+", c["expect"]["settings_family"])
    assert all(n in family for n in names), names
    assert not any(n.startswith("MPIR_CVAR_CH4_CMA") for n in names)
    assert ("MPICH_SMP_SINGLE_COPY_MODE", "XPMEM") not in all_settings(adv)
    assert any(f.id == "cma-xpmem-no-device" for f in adv.findings)


def test_cray_xpmem_gpu_wrong_family_is_flagged():
    from advisor_mpich_cma.lint import lint_env

    c = case("cray-xpmem-gpu")
    facts = facts_from_case(c["facts"])
    found = lint_env({knobs.CMA_ENABLE: "1"}, facts)
    assert [f.id for f in found] == ["cma-wrong-family"]
    bad = lint_env({"MPICH_SMP_SINGLE_COPY_MODE": "XPMEN"}, facts)
    assert any(f.id == "cma-bad-value" for f in bad)


# --------------------------------------------------------------------------- cma-device-pointer


def test_cma_device_pointer_log_is_efault():
    import errno

    c = case("cma-device-pointer")
    assert classify_log(c["log"]["text"]) == errno.EFAULT
    facts = facts_from_case(c["facts"])
    found = lint.diagnose_log(c["log"]["text"], facts)
    assert [f.id for f in found] == ["cma-device-pointer"]
    assert found[0].severity == c["expect"]["severity"]
    assert c["expect"]["finding"] in found[0].message
    # EPERM logs are the permission cases, a different finding
    assert [f.id for f in lint.diagnose_log("copy_iovs(224): process_vm_readv failed (errno 1)",
                                         facts)] == ["cma-blocked"]


def test_cma_device_pointer_no_threshold_tuning():
    c = case("cma-device-pointer")
    facts = facts_from_case(c["facts"])
    smoke = Evidence(id=evidence.SMOKE, values={"ok": False, "error": c["log"]["text"]})
    adv = recommend.recommend([sibling_ev("ok"), smoke], facts)
    assert [f.id for f in adv.findings if f.severity == "error"] == ["cma-device-pointer"]
    assert c["expect"]["finding"] in adv.findings[0].message
    assert not any(s.name in (knobs.CMA_THRESHOLD, knobs.CRAY_SIZE) for r in adv.recommendations
                   for s in r.settings), c["expect"]["not_a_remedy"]


# --------------------------------------------------------------------------- cma-pinned-host


def test_cma_pinned_host_verdict():
    c = case("cma-pinned-host")
    rows = top(c, "evidence")
    verdict = recommend.buffer_kind_finding(rows, top(c, "message_bytes"))
    assert verdict is not None and verdict.severity == "warning"
    nums = [float(x) for x in re.findall(r"~([\d.]+)x", c["expect"]["pinned_verdict"])]
    got = [float(x) for x in re.findall(r"([\d.]+)x slower", verdict.message)]
    assert len(got) == len(nums) == 2
    for g, n in zip(got, nums):
        assert abs(g - n) / n < 0.1, (got, nums)
    assert "optimal" not in verdict.message.replace("not optimal", "")


def test_cma_pinned_host_never_emits_debug_switches():
    c = case("cma-pinned-host")
    from cma_support import load_evidence

    facts = facts_from_case({"mpi": {"implementation": "mpich", "version": "5.0.2"}})
    adv = recommend.recommend(load_evidence("sweep-5.0.2"), facts)
    names = {n for n, _ in all_settings(adv)}
    assert not names & set(c["expect"]["never_emit"])
    # the sweep records the buffer kind it ran with
    sweep = [e for e in load_evidence("sweep-5.0.2") if e.id.startswith(evidence.SWEEP)][0]
    assert sweep.conditions.buffer_kind == "pageable"


@pytest.mark.parametrize("name", ["cma-docker-seccomp", "cma-seccomp-matrix", "cma-yama-siblings",
                                  "cma-yama-truth-table", "cray-xpmem-gpu", "cma-pinned-host",
                                  "cma-device-pointer"])
def test_cma_case_belongs_to_this_plugin(name):
    assert case(name)["case"]["plugin"] == "mpich-cma"


def test_cma_yama_truth_table_usable_kernel_but_mpich_forces_off():
    """Rows where the kernel allows the attach (CAP_SYS_PTRACE) but MPICH 5's init check still
    turns CMA off: no threshold or enable advice, a finding that says why."""
    from cma_support import load_evidence

    c = case("cma-yama-truth-table")
    keep = c["mpich_init_behaviour"]["forces_cma_off_unless_scope_in"]
    sweep = [e for e in load_evidence("sweep-5.0.2") if e.id != evidence.LIBRARY]
    for scope, cap, allowed in top(c, "truth_table"):
        if not allowed:
            continue
        facts = facts_from_case({"yama_ptrace_scope": scope, "cap_sys_ptrace": cap,
                                 "mpi": {"implementation": "mpich", "version": "5.0.2"}})
        adv = recommend.recommend(sweep, facts)
        forced = [f for f in adv.findings if f.id == "cma-forced-off-by-init"]
        if scope in keep:
            assert not forced and adv.recommendations
        else:
            assert forced and not adv.recommendations, scope
