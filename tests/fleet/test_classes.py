"""Machine classes: identical nodes share a class despite MemTotal, nr_hugepages and kernel patch
differences; emit's other-machine warning names each differing fact and the class verdict."""

from __future__ import annotations

from support import SHIPPED_PROFILE

from advisor.libraries import builtin_libraries
from advisor.facts.compare import machine_mismatch
from advisor.machine_class import MEMORY_GRANULE_BYTES, class_differences, class_inputs
from advisor.profile import load_profile


def _shipped():
    return load_profile(SHIPPED_PROFILE)


def _vary(f, **parts):
    return f.model_copy(update={k: getattr(f, k).model_copy(update=v) for k, v in parts.items()})


def test_identical_nodes_share_a_class_despite_patch_level_noise():
    f = _shipped().facts
    g = _vary(f, memory={"total_bytes": f.memory.total_bytes - (1 << 20),
                         "hugetlb_pages": {"2097152": 512}},
              kernel={"release": "6.18.45-fc-v658"})
    g = g.model_copy(update={"hostname": "node2"})
    assert f.fingerprint() != g.fingerprint()  # the per-node fingerprint stays exact
    assert f.class_fingerprint() == g.class_fingerprint()
    assert class_differences(f, g) == []
    assert f.class_fingerprint().startswith("icelake-2c-24g-")  # 25276510208 B = 23.5 GiB


def test_class_splits_on_hardware_and_software_that_advice_depends_on():
    f = _shipped().facts
    for parts, name in [({"memory": {"total_bytes": f.memory.total_bytes + 8 * MEMORY_GRANULE_BYTES}},
                         "memory.total_gib"),
                        ({"memory": {"thp_enabled": "always"}}, "memory.thp_enabled"),
                        ({"kernel": {"release": "6.19.1"}}, "kernel.series"),
                        ({"mpi": {"version": "4.3.2"}}, "mpi.version"),
                        ({"cpu": {"cores_logical": 4}}, "cpu.cores_logical")]:
        g = _vary(f, **parts)
        assert f.class_fingerprint() != g.class_fingerprint(), name
        assert [d[0] for d in class_differences(f, g)] == [name]


def test_class_inputs_round_memory_and_cut_the_kernel_release():
    inp = class_inputs(_shipped().facts)
    assert inp["memory"]["total_gib"] == 24 and inp["kernel"]["series"] == "6.18"
    assert "hugetlb_pages" not in inp["memory"] and "mpiexec" not in inp["mpi"]


def test_mismatch_names_each_differing_fact_and_the_class_verdict():
    p = _shipped()
    here = _vary(p.facts, kernel={"release": "6.18.45-fc-v658"})
    lines = machine_mismatch(p, here, builtin_libraries())
    line = next(ln for ln in lines if ln.startswith("fingerprint"))
    # one line per differing fact (issue 27), not all of them on the fingerprint line
    assert "kernel.release: profile 6.18.44-fc-v657, this machine 6.18.45-fc-v658" in lines
    assert f"same machine class ({p.facts.class_fingerprint()})" in line
    other = _vary(p.facts, cpu={"cores_logical": 4, "cores_physical": 4})
    lines = machine_mismatch(p, other, builtin_libraries())
    line = next(ln for ln in lines if ln.startswith("fingerprint"))
    assert "another machine class" in line
    assert "cpu.cores_logical: profile 2, this machine 4" in lines
    assert any(ln.startswith("cpu.cores_physical: ") for ln in lines)
