"""Helpers of the fleet tests (tests/fleet): per-node changes to a recorded profile."""

from __future__ import annotations


def scaled(profile, probe: str, factor: float):
    """``profile`` with every sample, warm-up sample and statistic of ``probe``'s evidence
    multiplied by ``factor`` (a node measuring uniformly slower or faster)."""
    def pt(p):
        st = p.stats
        if st is not None:
            st = st.model_copy(update={k: (v * factor if isinstance(v, float) else v)
                                       for k, v in st.model_dump().items()
                                       if k not in ("n", "ci_level")})
        return p.model_copy(update={"samples": [v * factor for v in p.samples],
                                    "warmup": [v * factor for v in p.warmup], "stats": st})

    def res(r):
        if r.probe != probe:
            return r
        return r.model_copy(update={"evidence": [e.model_copy(update={"series": [
            s.model_copy(update={"points": [pt(p) for p in s.points]}) for s in e.series]})
            for e in r.evidence]})

    return profile.model_copy(update={"results": [res(r) for r in profile.results]})


def write_node(directory, name: str, profile) -> None:
    from advisor.save import save_profile

    save_profile(profile.model_copy(update={"facts": profile.facts.model_copy(
        update={"hostname": name})}), directory / f"{name}.toml")
