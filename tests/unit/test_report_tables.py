"""``advisor.report.tables``: the rows of ``show``, ``plugins`` and ``facts`` are pure data the
CLI only renders (issue 14: the CLI no longer formats them inside the commands)."""

from __future__ import annotations

from advisor.knobs import Knob
from advisor.plugins import collect, make_plugin_manager
from advisor.report.tables import PLUGIN_HEADERS, fact_table, plugin_rows, plugin_table, show_report
from support import SHIPPED_PROFILE, recorded_facts, sample_profile


def test_show_rows_of_a_sample_profile():
    rep = show_report(sample_profile())
    assert rep.heading.startswith("profile of node001 (fingerprint ")
    assert rep.probes.rows == [("mpich-cma", "ok", "", "1.0")]
    assert rep.recommendations.rows == [(
        "mpich-cma", "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "8192 (8 KiB)", "16384 (16 KiB)",
        "high", "use CMA from 8 KiB")]
    assert rep.rationales == ["mpich-cma: cma-threshold: measured"]
    assert rep.verifications.rows == [] and rep.findings == [("[info] mpich-cma: demo", "")]
    for table in (rep.probes, rep.recommendations, rep.evidence):
        assert all(len(r) == len(table.headers) for r in table.rows)


def test_show_rows_of_the_shipped_profile_are_text():
    from advisor.profile import load_profile

    rep = show_report(load_profile(SHIPPED_PROFILE))
    assert rep.probes.rows and rep.recommendations.rows and rep.evidence.rows
    cells = [c for t in (rep.probes, rep.recommendations, rep.verifications, rep.evidence)
             for r in t.rows for c in r]
    assert all(isinstance(c, str) for c in cells)


def test_show_sizes_are_human_readable():
    """Issue 17: sizes, durations and bandwidths in show read KiB/MiB, µs/ms, GB/s; settings
    keep their copyable stored value with the size after it."""
    from advisor.profile import load_profile

    rep = show_report(load_profile(SHIPPED_PROFILE))
    ev = {(r[1], r[2]): r for r in rep.evidence.rows}
    lat = ev[("cma-sweep", "latency:cma-on")]
    assert lat[3] == "90 at 1 KiB .. 16 MiB" and lat[4].endswith(" ms") and " µs .. " in lat[4]
    assert ev[("memcpy-sweep", "default")][4].endswith(" GB/s")
    lib = next(r for r in rep.evidence.rows if r[1] == "cma-library")
    assert "value(s)" in lib[2] and "implementation=mpich" in lib[3]
    pool = [r for r in rep.recommendations.rows if r[1].endswith("ALIGNMENT_BYTES")]
    assert pool and pool[0][2] == "2097152 (2 MiB)"
    cma = next(line for line in rep.rationales if line.startswith("mpich-cma: cma-threshold"))
    assert "at 8 KiB" in cma and "8192 bytes" not in cma


def test_plugin_rows_come_from_the_registry_entries():
    from advisor import hookimpl

    knob = Knob(library="demo", name="DEMO_X", type="int", source="test")

    class Plugin:
        @hookimpl
        def advisor_register_knobs(self, register):
            register(knob)

        @hookimpl
        def advisor_register_facts(self, register):
            register("demo", lambda: {})

    reg = collect(make_plugin_manager(entry_points=False, plugins=[("p", Plugin())]))
    rows = {r["name"]: r for r in plugin_rows(reg, disabled={"off"}, origins={"off": "dist 1"})}
    assert rows["p"]["knobs"] == ["demo:DEMO_X"] and rows["p"]["fact_detectors"] == ["demo"]
    assert rows["p"]["status"] == "ok" and rows["p"]["probes"] == []
    assert rows["off"]["status"] == "disabled" and rows["off"]["origin"] == "dist 1"
    assert "env" in rows["advisor.emit.builtin"]["emitters"]
    table = plugin_table(list(rows.values()))
    assert table.headers == PLUGIN_HEADERS and all(len(r) == len(PLUGIN_HEADERS)
                                                   for r in table.rows)


def test_fact_rows_are_dotted_names():
    t = fact_table(recorded_facts())
    rows = dict(t.rows)
    assert rows["mpi.version"] == "5.0.2" and rows["kernel.glibc_version"] == "2.36"
    assert t.title.startswith("facts (fingerprint ") and "warnings" not in rows
