"""The stability of the CMA threshold decision (``advisor_mpich_cma.minimax.decide``): its whole
rule taken again on every bootstrap resample, each resample's tie band by a CI of its own
(``rerun_picks``).  Pure: numpy arrays in, candidate indices out.
"""

from __future__ import annotations

#: Inner resamples per resample in the stability's nested bootstrap (``rerun_picks``): the
#: tie test of each resample takes the 2.5 % quantile of this many gaps.  Measured on the 11
#: recorded full probes of the 2-core VM (2026-12-02, each prefix of 2 or more of their
#: launches, 5 seeds each): the seed-to-seed spread of the stability is the outer bootstrap's
#: (median standard deviation 0.031, 0.030 and 0.030 with 100, 200 and 400 inner resamples;
#: 0.033 for the single-level rule this replaced), so more cost time and buy nothing.
N_INNER = 100
#: Resamples whose inner resamples are held at once: each array is ``_CHUNK x N_INNER x
#: (launches + 1) x candidates`` floats, 2.8 MB for 6 launches and 20 candidates.
_CHUNK = 25


def rerun_picks(boot, full, col_launch, always, drawn, bworst, dist, alpha: float,
                 one_state: bool, rng) -> list[int]:
    """The decision of ``minimax.decide``, taken whole on every bootstrap resample: the
    candidate index a probe measured again would advise (an iterated bootstrap: Hall 1986, Ann.
    Statist. 14; Beran 1987, Biometrika 74).

    Per resample ``r`` (its launches ``drawn[r]``, its rounds resampled: ``boot[r]``, worst
    ratios ``bworst[r]``): its best candidate; its tie band by the same test as
    ``minimax.decide``'s, the ``alpha`` quantile of ``worst(best) - worst(c)`` over ``N_INNER``
    inner resamples that draw launches again from ``drawn[r]`` and move each drawn launch's
    worst ratios by the round noise of another resample (``boot[r'] - full`` per launch: the
    rounds resampled again, without a third level of medians); then the member nearest the
    default.  Taking the tie test again on each resample, rather than one tolerance found on the
    full data, keeps a decision that one launch carries (its state missing from a third of the
    resamples) from reading as unstable when every such resample would keep the same advice, and
    one that two launches barely carry from reading as stable.

    Shapes: ``boot`` (B, C, S) resampled scores, ``full`` (C, S), ``col_launch`` (S,) launch
    index of each column, ``always`` (S,) columns kept in every resample, ``drawn`` (B, L)
    launch indices, ``bworst`` (B, C), ``dist`` (C,) sizes routed unlike the default.
    """
    import numpy as np

    n_boot, n_c, _ = boot.shape
    n_l = drawn.shape[1]
    # per resample, candidate and launch: the worst score over that launch's columns
    w = np.full((n_boot, n_c, n_l + 1), np.inf)
    wf = np.full((n_c, n_l + 1), np.inf)
    for j in range(n_l + 1):
        m = always if j == n_l else (col_launch == j) & ~always
        if m.any():
            w[:, :, j] = boot[:, :, m].min(axis=2)
            wf[:, j] = full[:, m].min(axis=1)
    picks: list[int] = []
    for start in range(0, n_boot, _CHUNK):
        rs = np.arange(start, min(n_boot, start + _CHUNK))
        pos = rng.integers(0, n_l, size=(len(rs), N_INNER, n_l))
        dl = np.take_along_axis(np.repeat(drawn[rs][:, None, :], N_INNER, axis=1), pos, axis=2)
        dl = np.concatenate([dl, np.full((len(rs), N_INNER, 1), n_l)], axis=2)  # + always
        other = rng.integers(0, n_boot, size=(len(rs), N_INNER))
        base = w[rs[:, None, None], :, dl]                          # (R, I, L+1, C)
        with np.errstate(invalid="ignore"):  # inf - inf where a launch has no column: kept inf
            moved = base + w[other[:, :, None], :, dl] - wf.T[dl]
        inner = np.where(np.isfinite(base), moved, np.inf).min(axis=2)   # (R, I, C)
        for k, r in enumerate(rs):
            row = bworst[r]
            b = int(np.argmax(row))
            gap_lo = np.quantile(inner[k][:, [b]] - inner[k], alpha, axis=0)
            tie = [c for c in range(n_c) if c == b or one_state or gap_lo[c] <= 0.0]
            picks.append(min(tie, key=lambda c: (dist[c], -row[c], c)))
    return picks
