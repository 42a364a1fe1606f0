"""The sweep plan of the MPI plugins: which message sizes, how many independent launches per
configuration and how many seconds of timing per size, from the context (quick or full) and its
``--option sizes=A,B,...``, ``repeats=N``, ``target_s=S``."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

#: The ``--option`` keys ``plan`` reads, for the MPI probes' ``option_keys`` (``advisor.probe``).
SWEEP_OPTION_KEYS = {
    "sizes": "message sizes in bytes, comma-separated (replaces the sweep's grid)",
    "repeats": "independent launches per configuration (at least 2)",
    "target_s": "seconds of timing per size and measure",
}


def check_sweep_options(options: Mapping[str, str]) -> None:
    """Raise ``advisor.errors.BadInputError`` for a bad ``sizes``, ``repeats`` or ``target_s``
    value (what ``plan`` would fail on while measuring), for the probes' ``check_options``."""
    from advisor.probe import option_number, option_numbers

    option_numbers(options, "sizes", int, minimum=1)
    option_number(options, "repeats", int, minimum=1)
    option_number(options, "target_s", float, above=0.0)


def plan(ctx: Any, *, quick: tuple[Sequence[int], int, float],
         full: tuple[Sequence[int], int, float]) -> dict:
    """The plan for ``ctx`` (a ``advisor.probe.MeasureContext``: ``quick``, ``options``).

    :param quick: ``(sizes in bytes, repeats, target seconds per size)`` of a quick run.
    :param full: the same for a full run.
    :return: ``{"sizes": sorted sizes (bytes), "repeats": int >= 2 when given as an option,
        "target_s": float}``.
    :raises ValueError: an option that is not a number.
    """
    sizes, repeats, target = quick if ctx.quick else full
    sizes = list(sizes)
    if "sizes" in ctx.options:
        sizes = sorted({int(x) for x in ctx.options["sizes"].split(",") if x.strip()})
    if "repeats" in ctx.options:
        repeats = max(2, int(ctx.options["repeats"]))
    if "target_s" in ctx.options:
        target = float(ctx.options["target_s"])
    return {"sizes": sizes, "repeats": repeats, "target_s": target}
