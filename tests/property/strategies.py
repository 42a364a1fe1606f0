"""Hypothesis strategies for the schema (``from strategies import profiles``; this folder's
conftest puts it on ``sys.path``).  Sizes are kept small so each example is cheap; values cover
the whole range the schema allows (any Unicode text, 64-bit integers, infinite floats)."""

from __future__ import annotations

from hypothesis import strategies as st

from advisor.models import (Conditions, Evidence, Facts, Finding, PluginResult, Point, Profile,
                            Provenance, Recommendation, Series, Setting, Stats)

#: TOML integers are signed 64-bit (TOML 1.0 spec, "Integer"): the range a profile can carry.
INT64 = st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1)
NONNEG = st.integers(min_value=0, max_value=2 ** 63 - 1)
#: NaN is left out here (NaN != NaN breaks equality); test_roundtrip checks it separately.
FLOATS = st.floats(allow_nan=False)
TEXT = st.text(max_size=20)
IDS = st.from_regex(r"[A-Za-z0-9_.:-]{1,12}", fullmatch=True)
SCALARS = st.one_of(st.booleans(), INT64, FLOATS, TEXT)
#: Setting names: anything without control characters (models.Setting refuses those).
NAMES = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=20)


def _opt(s):
    return st.one_of(st.none(), s)


stats = st.builds(Stats, n=NONNEG, median=FLOATS, mean=FLOATS, p5=FLOATS, p95=FLOATS, min=FLOATS,
                  max=FLOATS, ci_low=_opt(FLOATS), ci_high=_opt(FLOATS),
                  ci_level=_opt(st.floats(min_value=0.01, max_value=0.99)))
points = st.builds(Point, x=_opt(FLOATS), label=_opt(TEXT),
                   samples=st.lists(FLOATS, max_size=4), warmup=st.lists(FLOATS, max_size=2),
                   stats=_opt(stats), artefact=_opt(TEXT))
series = st.builds(Series, name=TEXT, unit=TEXT, x_name=_opt(TEXT), x_unit=_opt(TEXT),
                   points=st.lists(points, max_size=2))
conditions = st.builds(
    Conditions, env=st.dictionaries(TEXT, TEXT, max_size=3),
    affinity=_opt(st.lists(NONNEG, max_size=3)), loadavg_1m=_opt(FLOATS),
    thp_enabled=_opt(TEXT),
    buffer_kind=_opt(st.sampled_from(["pageable", "pinned", "device", "mapped", "none"])),
    buffer_fill=_opt(TEXT), hugepages=_opt(TEXT), align_bytes=_opt(NONNEG),
    launcher=_opt(st.lists(TEXT, max_size=3)),
    library_versions=st.dictionaries(TEXT, TEXT, max_size=2),
    notes=st.dictionaries(TEXT, SCALARS, max_size=3))
evidence = st.builds(Evidence, id=IDS, description=TEXT, series=st.lists(series, max_size=2),
                     conditions=conditions, values=st.dictionaries(TEXT, SCALARS, max_size=3))
findings = st.builds(Finding, id=IDS, severity=st.sampled_from(["info", "warning", "error"]),
                     message=TEXT, remedy=_opt(TEXT), evidence=st.lists(IDS, max_size=2))
settings = st.builds(
    Setting, library=TEXT, flavour=_opt(TEXT), name=NAMES, value=SCALARS,
    type=st.sampled_from(["int", "bytes", "bool", "str", "enum", "float", "list"]),
    unit=_opt(TEXT), default=_opt(SCALARS), versions=_opt(TEXT),
    kind=st.sampled_from(["env", "config"]), separator=_opt(TEXT), is_default=st.booleans())
recommendations = st.builds(
    Recommendation, id=IDS, title=TEXT, settings=st.lists(settings, max_size=3), rationale=TEXT,
    confidence=st.sampled_from(["low", "medium", "high"]), evidence=st.lists(IDS, max_size=2),
    verifiable=st.booleans())
results = st.builds(
    PluginResult, plugin=TEXT, probe=TEXT,
    status=st.sampled_from(["ok", "not-applicable", "failed"]), reason=_opt(TEXT),
    duration_s=st.floats(min_value=0, allow_infinity=False),
    findings=st.lists(findings, max_size=2), recommendations=st.lists(recommendations, max_size=2),
    evidence=st.lists(evidence, max_size=2))
facts = st.builds(
    Facts, hostname=_opt(TEXT),
    cpu=st.builds(dict, arch=_opt(TEXT), cores_logical=_opt(NONNEG)),
    security=st.builds(dict, ptrace_scope=_opt(st.integers(0, 3)),
                       seccomp_mode=_opt(st.integers(0, 2)), cap_sys_ptrace=_opt(st.booleans())),
    mpi=st.builds(dict, implementation=_opt(TEXT), version=_opt(TEXT)),
    python_packages=st.dictionaries(TEXT, TEXT, max_size=2),
    extra=st.dictionaries(TEXT, st.dictionaries(TEXT, SCALARS, max_size=2), max_size=2),
    warnings=st.lists(TEXT, max_size=2))
provenance = st.builds(Provenance, advisor_version=TEXT, command=TEXT, created=TEXT,
                       duration_s=st.floats(min_value=0, allow_infinity=False),
                       hostname=_opt(TEXT))


@st.composite
def profiles(draw, result_strategy=results):
    f = draw(facts)
    return Profile(provenance=draw(provenance), fingerprint=f.fingerprint(), facts=f,
                   results=draw(st.lists(result_strategy, max_size=2)))
