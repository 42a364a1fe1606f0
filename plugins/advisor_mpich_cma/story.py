"""One decision, one story: the record of a minimax-regret decision and every text drawn from it.

Issue 25 item 2.  The title, rationale and findings of the paired CMA advice, and the values of
the ``cma-decision`` evidence, are all generated here from one ``DecisionRecord`` (pure), so no
two of them can say different things: "keep the default" appears exactly when
``kept_default`` is True; "no threshold fixes that" only when the advice is the best candidate;
"the default is within noise" only when the default is the advice and not the best.

Issue 25 item 8.  ``default_measured``: whether the comparison holds the library's default as it
is.  The paired measurement composes a threshold from CMA-on and CMA-off results per size, which
is the default itself only when the default *is* such a threshold and is known: not when the
library's default single-copy mode is one the probe does not switch (HPE Cray MPICH's XPMEM),
nor when its threshold or enable default was not read from the library (built-in table, or an
implausible reported value stood in for).  Then the advice says so and its confidence drops a
step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from advisor.measure import STABLE_SHARE
from advisor.models import Finding

from advisor_mpich_cma import knobs
from advisor_mpich_cma import minimax
from advisor_mpich_cma.evidence import KIND_NAMES, Library
from advisor_mpich_cma.threshold import fmt_bytes

#: Why the paired launches stopped (``paired.run_paired``; ``cma-decision`` value ``stopped``).
STOP_STABLE, STOP_BUDGET, STOP_CAP = "stable", "budget", "launch cap"
STOP_ONE_STATE = "one-state cap"

#: Confidence levels, lowest first; a default not measured as itself moves one step down.
LEVELS = ("low", "medium", "high")
#: Smallest paired rounds per size for "high" (kept from ``advice.minimax_advice``: with
#: fewer, a per-size median rests on one or two pairs).
HIGH_PAIRS = 3
#: Traffic kinds: the measure each is bound by (the paired worker's ping-pong latency and
#: osu_bw-style windowed bandwidth) and its index in ``Decision.ratios``.
TRAFFIC = (("latency-bound", "ping-pong latency", 0), ("bandwidth-bound", "windowed bandwidth", 1))


def thr_name(t: Optional[int]) -> str:
    return "CMA off" if t is None else f"threshold {fmt_bytes(t)}"


def _where(p: str, n: int) -> str:
    return f"{(p + ' ') if p else ''}{fmt_bytes(n)}"


def measuring_clause(values: dict) -> str:
    """How measuring ended, from the paired evidence's values (``paired.run_paired``):
    ``"measuring stopped: stable after 4 launches (stability after launch 2, 3, 4: 0.98, 0.99,
    1.00; launches 2, 3 had met one state of a copy path that switches between two, which
    does not stop as stable)"``; with ``budget`` (which budget stopped it) after the reason:
    ``"measuring stopped: budget (launch 3 would end past the run's time aim (advisor probe:
    30 s in all, ...) ...) after 2 launches"``;
    empty without ``stopped``.  Pure."""
    stopped = values.get("stopped")
    if not stopped:
        return ""
    n = int(values.get("launches", 0) or 0)
    why = f" ({values['budget']})" if values.get("budget") else ""
    text = f"measuring stopped: {stopped}{why} after {n} launch{'es' if n != 1 else ''}"
    stab = [x for x in str(values.get("stability_by_launch", "")).split(",") if x]
    states = [x for x in str(values.get("machine_states_by_launch", "")).split(",") if x]
    parts = []
    if stab:
        first = n - len(stab) + 1 if n >= len(stab) else 2
        parts.append(f"stability after launch {', '.join(str(first + i) for i in range(len(stab)))}: "
                     f"{', '.join(stab)}")
    one = [str(first + i) for i, st in enumerate(states) if st == "one"] if stab else []
    if one:
        parts.append(f"launch{'es' if len(one) > 1 else ''} {', '.join(one)} had met one state "
                     f"of a copy path that switches between two, which does not stop as stable")
    return text + (f" ({'; '.join(parts)})" if parts else "")


def default_measured(lib: Library, substituted: Optional[str] = None) -> tuple[bool, str]:
    """``(measured, why_not)``: whether the decision's default candidate is the library's default
    run as it is (see the module docstring).  ``substituted``: why ``sane_library`` replaced the
    reported threshold (None: it did not)."""
    if lib.cray and lib.mode_default not in ("CMA", "NONE"):
        return False, (f"the library's default single-copy mode {knobs.CRAY_MODE}="
                       f"{lib.mode_default} is not measured here (the probe switches CMA on and "
                       f"off); CMA off stands in for it in the comparison")
    if substituted:
        return False, (f"the library's default threshold could not be used ({substituted}); "
                       f"the built-in table's value stands in for it")
    if not lib.cray and lib.cma_enable_default is None:
        return False, ("the library's CMA enable default is unknown; CMA off stands in for it")
    if lib.defaults_source and lib.defaults_source.startswith("built-in table"):
        return False, (f"the library's defaults were not read from it ({lib.defaults_source}); "
                       f"the table's default stands in for it")
    return True, ""


@dataclass(frozen=True)
class DecisionRecord:
    """Everything the paired CMA advice says, in one place.

    Attributes:
        d: the minimax-regret decision (chosen candidate ``d.advice``, default, best, tie band,
            stability, per-size ratios, regret left ``d.losses``).
        kinds: buffer kinds decided together ("base", "thp").
        default_ok: the default is measured as itself (``default_measured``).
        default_note: why not, when it is not.
        measuring: how the sequential measurement ended (``paired.run_paired``'s values
            ``stopped``, ``stability_by_launch``, ``machine_states_by_launch``), as a clause;
            empty when not recorded.
        stopped: why the launches stopped (``paired.STOP_*``, "launch <i> failed: ..."), or
            "" when not recorded; the unstable finding's remedy follows it.
    """

    d: minimax.Decision
    kinds: tuple[str, ...] = ("base",)
    default_ok: bool = True
    default_note: str = ""
    measuring: str = ""
    stopped: str = ""

    # ------------------------------------------------------------------ the decision's facts
    @property
    def kept_default(self) -> bool:
        return self.d.advice == self.d.default

    @property
    def kept_why(self) -> str:
        """"best" (the default has the best worst ratio), "within-noise" (the default is in the
        tie band of a better one), "one-state" (a better one was measured, but every launch met
        one state of a two-state copy path), "unstable" (the rule chose a change that too few
        resamples make at all: ``minimax.Decision.withheld``) or "" (the advice is not the
        default)."""
        if not self.kept_default:
            return ""
        if self.d.withheld is not None:
            return "unstable"
        if self.d.best == self.d.default:
            return "best"
        return "one-state" if self.d.one_state else "within-noise"

    @property
    def stable(self) -> bool:
        return self.d.stability >= STABLE_SHARE

    @property
    def confidence(self) -> str:
        level = ("high" if self.d.pairs >= HIGH_PAIRS else "medium") if self.stable else "low"
        if not self.default_ok:
            level = LEVELS[max(0, LEVELS.index(level) - 1)]
        return level

    def traffic_winners(self) -> dict[str, Optional[int]]:
        """Per traffic kind, the candidate with the best worst ratio on its measure alone
        (exact ties: the one in the tie band nearest the default, then the advice)."""
        out = {}
        cands = list(self.d.worst)
        order = {t: i for i, t in enumerate(self.d.tie)}
        for kind, _, m in TRAFFIC:
            def worst(t):
                sc = [min(1.0, r[m]) if t is not None and n >= t else min(1.0, 1 / r[m])
                      for (_, n), r in self.d.ratios.items()]
                return min(sc) if sc else 1.0
            out[kind] = max(cands, key=lambda t: (round(worst(t), 9), -order.get(t, len(order)),
                                                  t == self.d.advice))
        return out

    def split(self) -> Optional[str]:
        """Where no candidate serves both traffic kinds: which serves which, at which sizes they
        route differently, and by how much (CMA over the copy path there); else None."""
        w = self.traffic_winners()
        lat_t, bw_t = w["latency-bound"], w["bandwidth-bound"]
        if lat_t == bw_t or not self.d.ratios:
            return None

        def on(t, n):
            return t is not None and n >= t

        rows = [(p, n, r) for (p, n), r in sorted(self.d.ratios.items()) if on(lat_t, n) !=
                on(bw_t, n)]
        if not rows:
            return None
        parts = [f"{_where(p, n)}: CMA latency x{r[0]:.2f}, bandwidth x{r[1]:.2f} of the copy "
                 f"path" for p, n, r in rows]
        return (f"no threshold serves both kinds of traffic: for latency-bound traffic "
                f"(ping-pong) {thr_name(lat_t)} loses least, for bandwidth-bound traffic "
                f"(windowed bandwidth) {thr_name(bw_t)}; they differ at "
                + "; ".join(parts) + f" (ratio > 1: CMA better). The advice "
                f"({thr_name(self.d.advice)}) takes the smaller of the two measures per size")

    # ------------------------------------------------------------------------- the texts
    def title(self) -> str:
        tail = f" (stability {self.d.stability:.2f}; {'+'.join(self.kinds)} pages)"
        a = self.d.advice
        if self.kept_why == "unstable":
            w, share = self.d.withheld
            head = ("Keep CMA off (the default)" if a is None else
                    f"Keep the default CMA threshold {a} bytes") + (
                f": {thr_name(w)} was chosen, but only {share:.0%} of resamples change the "
                f"default")
        elif a is None:
            head = ("Keep CMA off (the default): it loses least" if self.kept_default else
                    "Disable CMA: it loses least with CMA off")
        elif self.kept_why == "best":
            head = f"Keep the default CMA threshold {a} bytes: measured to lose least here"
        elif self.kept_why == "within-noise":
            head = (f"Keep the default CMA threshold {a} bytes: within noise of the best "
                    f"({thr_name(self.d.best)})")
        elif self.kept_why == "one-state":
            head = (f"Keep the default CMA threshold {a} bytes: {thr_name(self.d.best)} won "
                    f"only in the one machine state these launches met")
        else:
            head = f"Use CMA from {a} bytes ({fmt_bytes(a)})"
        return head + tail

    def tie_text(self) -> str:
        if len(self.d.tie) < 2:
            return ""
        if self.d.one_state:
            # a tie by rule, not by noise: the "one-state" reason already says it
            if self.kept_why == "one-state":
                return ""
            runner = max((t for t in self.d.tie if t != self.d.advice),
                         key=lambda t: self.d.worst[t])
            return ("Every candidate counts as tied, by rule, not by noise: every launch met "
                    "one state of a copy path that switches between two (cma-machine-state), "
                    "and how the others do in the other state is unmeasured (the next best "
                    f"measured: {thr_name(runner)} {self.d.worst[runner]:.2f}). ")
        whose = "the rule's choice" if self.d.withheld is not None else "the advice"
        return ("Tie band (within noise of the best worst ratio): "
                + ", ".join(f"{thr_name(t)} {self.d.worst[t]:.2f}" for t in self.d.tie)
                + f"; {whose} is its member nearest the library default (fewest measured "
                  "sizes routed differently). ")

    def rationale(self, lib: Library) -> str:
        d = self.d
        kind_txt = " and ".join(KIND_NAMES.get(k, k) for k in self.kinds)
        per_size = ", ".join(
            f"{_where(p, n)}: default x{d.per_size_default[(p, n)]:.2f}, "
            f"advice x{d.per_size_advice[(p, n)]:.2f}" for (p, n) in sorted(d.per_size_advice))
        why = ""
        if self.kept_why == "within-noise":
            why = (f"{thr_name(d.best)} has the best worst ratio ({d.worst[d.best]:.2f} vs the "
                   f"default's {d.worst[d.default]:.2f}), but the default is within noise of it "
                   f"(the CI of the improvement reaches 0), so the default stays. ")
        elif self.kept_why == "best":
            why = f"The default ({thr_name(d.default)}) has the best worst ratio. "
        elif self.kept_why == "one-state":
            why = (f"{thr_name(d.best)} has the best worst ratio ({d.worst[d.best]:.2f} vs the "
                   f"default's {d.worst[d.default]:.2f}), but every launch met the same state of "
                   f"a copy path that switches between two (cma-machine-state): how it does in "
                   f"the other state is unmeasured, so every candidate ties and the default "
                   f"stays. ")
        elif self.kept_why == "unstable":
            w, share = d.withheld
            why = (f"The rule chose {thr_name(w)} (worst ratio {d.worst[w]:.2f} vs the "
                   f"default's {d.worst[d.default]:.2f}), but only {share:.0%} of the resamples "
                   f"of the launches and their rounds change the default at all (policy "
                   f"{STABLE_SHARE:.0%}): a change that would come and go from one probe to the "
                   f"next is not advised, so the default stays. ")
        elif d.advice != d.best:
            why = (f"{thr_name(d.best)} has the best worst ratio ({d.worst[d.best]:.2f}), "
                   f"{thr_name(d.advice)} ({d.worst[d.advice]:.2f}) is within noise of it and "
                   f"nearer the default. ")
        text = (why + self.tie_text() + f"Buffers: {kind_txt}. "
                f"Minimax regret over {len(d.per_size_advice)} measured sizes ({d.pairs}+ paired "
                f"rounds each; ratio = performance over the per-size best of CMA on/off, the "
                f"smaller of latency and bandwidth): worst ratio of the default "
                f"({thr_name(d.default)}) {d.worst[d.default]:.2f}, of {thr_name(d.best)} "
                f"{d.worst[d.best]:.2f} (improvement 95 % CI [{d.improvement_ci[0]:.3f}, "
                f"{d.improvement_ci[1]:.3f}]). Per size: {per_size}. Stability: {self.stab()}")
        if not self.stable:
            text += (f"; below {STABLE_SHARE:.0%} the advice flips on noise (candidates tie "
                     f"within the measured noise), so the confidence is low")
        text += "."
        if not self.default_ok:
            text += f" The default is not measured as itself: {self.default_note}."
        if d.advice is not None and not self.kept_default:
            name = knobs.CRAY_SIZE if lib.cray else knobs.CMA_THRESHOLD
            text += (f" It replaces the default {name}={lib.threshold_default} (from "
                     f"{lib.defaults_source}).")
        return text

    def stab(self) -> str:
        launches = (f"the {self.d.launches} launches and their paired rounds"
                    if self.d.launches > 1 else "the paired rounds")
        # the count, and a share to 0.1 %: 159 of 200 read "80%" beside "below the 80% policy"
        n = minimax.N_STABILITY
        return (f"the same advice in {round(self.d.stability * n)} of {n} bootstrap resamples "
                f"of {launches} ({self.d.stability:.1%})"
                + (f"; {self.measuring}" if self.measuring else ""))

    def findings(self, ids: list[str]) -> list[Finding]:
        d = self.d
        out: list[Finding] = []
        if d.losses:
            lost = "; ".join(f"{_where(p, n)}: x{r:.2f} of the best (CI up to {hi:.2f})"
                             for p, n, r, hi in d.losses)
            upper = any(d.advice is not None and n >= d.advice for _, n, _, _ in d.losses)
            if d.advice == d.best:
                fix = "no threshold fixes that without losing more elsewhere"
            elif d.one_state:
                fix = (f"{thr_name(d.best)} measured a higher worst ratio "
                       f"({d.worst[d.best]:.2f}, the advice {d.worst[d.advice]:.2f}; 1 = "
                       f"the best at every size), but every launch met one state of a copy "
                       f"path that switches between two, so every candidate ties by rule and "
                       f"the advice is the library default")
            elif d.withheld is not None:
                fix = (f"{thr_name(d.best)} measured a higher worst ratio "
                       f"({d.worst[d.best]:.2f}, the advice {d.worst[d.advice]:.2f}; 1 = "
                       f"the best at every size), but the change the rule chose "
                       f"({thr_name(d.withheld[0])}) is made by only {d.withheld[1]:.0%} of "
                       f"resamples, so the default stays")
            else:
                fix = (f"{thr_name(d.best)} measured a higher worst ratio "
                       f"({d.worst[d.best]:.2f}, the advice {d.worst[d.advice]:.2f}; 1 = "
                       f"the best at every size), but within noise, so the advice is the "
                       f"tie's member nearest the library default")
            out.append(Finding(
                id="cma-regret-left", severity="warning", evidence=ids,
                message=(f"the advice ({thr_name(d.advice)}) is measurably beaten at some sizes,"
                         f" and {fix}: {lost}"
                         + ("; CMA loses there but MPICH has no upper CMA threshold"
                            if upper else ""))))
        split = self.split()
        if split is not None:
            out.append(Finding(id="cma-traffic-split", severity="info", evidence=ids,
                               message=split))
        if not self.stable:
            out.append(Finding(
                id="cma-advice-unstable", severity="warning", evidence=ids,
                message=f"the CMA advice is unstable: {self.stab()} (policy: at least "
                        f"{STABLE_SHARE:.0%})",
                remedy=self.more_launches()))
        if not self.default_ok:
            out.append(Finding(
                id="cma-default-not-measured", severity="warning", evidence=ids,
                message=f"the library default is not measured as itself: {self.default_note}; "
                        f"the confidence is one step lower ({self.confidence})",
                remedy="run the probe against the MPICH the jobs load (its mpivars reports the "
                       "defaults) so the default is compared as it is"))
        return out

    def more_launches(self) -> str:
        """The unstable finding's remedy, for what stopped the launches (``stopped``)."""
        if self.stopped == STOP_BUDGET:
            return ("measure more launches: probe this plugin on its own ('--plugin "
                    "mpich-cma': the run's time aim is then all its own), or with a larger "
                    "'--option budget_s=S' (seconds of measuring) and a --time-budget whose "
                    "share fits it (the probes still to run share what is left equally)")
        if self.stopped == STOP_CAP:
            return (f"measure more launches: probe again with '--option launches=N' above the "
                    f"{self.d.launches} measured")
        return ("measure more launches: probe again with '--option launches=N' above the "
                f"{self.d.launches} measured or '--option budget_s=S' (seconds of measuring), "
                f"and a --time-budget that fits them")

    def as_values(self) -> dict:
        """``cma-decision`` values: the decision's, with ``kept_default`` / ``kept_why`` /
        ``default_measured`` from this record (the same facts the texts state)."""
        v = dict(self.d.as_values())
        v.update(kept_default=self.kept_default, kept_why=self.kept_why,
                 default_measured=self.default_ok, confidence=self.confidence)
        for kind, _, _ in TRAFFIC:
            t = self.traffic_winners()[kind]
            v[f"traffic_winner_bytes:{kind}"] = -1 if t is None else int(t)
        return v
