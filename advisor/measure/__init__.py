"""The measurement harness: every plugin measures through these functions.

- host buffers with a known fill, alignment and page policy: ``host_buffer``,
  ``buffer_conditions``, ``buffer_info``, ``residency``;
- the sampler and its statistics: ``sample`` -> ``SampleResult``, ``summarize``,
  ``bootstrap_median_ci``, ``split_warmup``, ``classify_series``;
- comparison against a measured noise floor: ``compare`` -> ``Comparison``,
  ``noise_floor_from_aa``, ``interleave`` -> ``InterleaveResult``, ``resample_stability``;
- fresh processes and MPI jobs: ``run_python``, ``run_mpi``, ``LaunchError``,
  ``mpi_launch_available``, ``resolve_launcher``;
- plausibility: ``copy_ceiling`` / ``measure_ceiling``, ``shared_ceiling`` (measured once per
  process, reused by the next caller with the same parameters: ``remember_ceiling``,
  ``forget_ceilings``), ``plausibility``, ``checked_point``;
- placement and first touch: ``placed_pair`` (never a power of two apart),
  ``placed_pair_with_control`` (plus a view 0 mod 4 KiB away, for ``aliasing_artefact``), ``distance_facts``,
  ``aliasing_artefact``, ``first_touch_artefact``;
- artefacts in recorded evidence (pure): ``artefact_point`` (a point that carries no
  bandwidth), ``relabel`` / ``relabel_profile`` (labels re-derived from the record),
  ``flags``, ``veto`` and ``withheld`` (an artefact withdraws or lowers the advice drawn from
  its record),
  ``implausible_threshold`` (a library-reported size below a page or above memory);
- ``conditions`` -> ``models.Conditions``.

numpy and psutil are imported inside the functions that need them, so importing this package
is cheap.  Nothing here prints; time budgets are ``deadline`` arguments (``time.monotonic()``
seconds, e.g. ``MeasureContext.deadline``).
"""

from advisor.measure.artefacts import (
    ARTEFACT_LOWERED,
    ARTEFACT_WITHDRAWN,
    CEILING_PEAK_KEY,
    artefact_kind,
    artefact_point,
    flags,
    implausible_threshold,
    relabel,
    relabel_all,
    relabel_profile,
    veto,
    withheld,
)
from advisor.measure.buffers import (
    BufferInfo,
    Residency,
    buffer_conditions,
    buffer_info,
    host_buffer,
    page_size,
    residency,
    thp_backed_bytes,
)
from advisor.measure.ceiling import (
    CLPEAK_FACTOR,
    Ceiling,
    checked_point,
    copy_ceiling,
    forget_ceilings,
    measure_ceiling,
    plausibility,
    remember_ceiling,
    shared_ceiling,
)
from advisor.measure.conditions import conditions, library_versions, thp_mode
from advisor.measure.interleave import (DISAGREE_FACTOR, STABLE_SHARE, InterleaveResult,
                                        interleave, resample_stability)
from advisor.measure.launch import (
    LaunchError,
    mpi_launch_available,
    resolve_launcher,
    run_command,
    run_mpi,
    run_python,
)
from advisor.measure.placement import (
    ALIAS_SKEW_BYTES,
    ALIAS_WINDOW_BYTES,
    Placement,
    aliasing_artefact,
    distance_facts,
    first_touch_artefact,
    near_power_of_two,
    placed_pair,
    placed_pair_with_control,
    placement_of,
)
from advisor.measure.sampling import SampleResult, sample, timer_overhead_ns
from advisor.measure.series import SeriesShape, classify_series, split_warmup
from advisor.measure.stats import (
    REL_PRECISION,
    Comparison,
    bootstrap_median_ci,
    compare,
    median_ci_order,
    noise_floor_from_aa,
    precise_enough,
    summarize,
)
from advisor.measure.worker import report

__all__ = [
    "BufferInfo", "Residency", "buffer_conditions", "buffer_info", "host_buffer", "page_size",
    "residency", "thp_backed_bytes", "CLPEAK_FACTOR", "checked_point", "copy_ceiling", "plausibility", "conditions",
    "library_versions", "thp_mode", "DISAGREE_FACTOR", "STABLE_SHARE", "InterleaveResult", "interleave",
    "resample_stability",
    "LaunchError", "mpi_launch_available", "resolve_launcher", "run_command", "run_mpi",
    "run_python", "SampleResult", "sample", "timer_overhead_ns", "Comparison", "SeriesShape",
    "bootstrap_median_ci", "classify_series", "compare", "noise_floor_from_aa", "split_warmup",
    "summarize", "report", "Ceiling", "measure_ceiling", "ALIAS_SKEW_BYTES", "ALIAS_WINDOW_BYTES",
    "Placement", "aliasing_artefact", "distance_facts", "first_touch_artefact",
    "near_power_of_two", "placed_pair", "placed_pair_with_control", "placement_of", "shared_ceiling", "remember_ceiling",
    "forget_ceilings", "REL_PRECISION", "median_ci_order", "precise_enough",
    "ARTEFACT_LOWERED", "ARTEFACT_WITHDRAWN", "CEILING_PEAK_KEY", "artefact_kind",
    "artefact_point", "flags", "implausible_threshold", "relabel", "relabel_all",
    "relabel_profile", "veto", "withheld",
]
