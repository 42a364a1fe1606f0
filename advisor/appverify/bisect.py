"""Delta debugging: the smallest set of settings that still makes the command fail.

``ddmin`` is Zeller and Hildebrandt's minimising delta debugging algorithm ("Simplifying and
Isolating Failure-Inducing Input", IEEE TSE 28(2), 2002, figure 5): split the failing set into
``n`` chunks, keep a chunk or a complement that still fails, otherwise double ``n``.  The result
is 1-minimal: removing any single setting from it makes the failure go away.  For the few
settings an environment holds (a handful), it needs O(k log k) runs for a single culprit.
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


def _chunks(items: Sequence[T], n: int) -> list[list[T]]:
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return [c for c in out if c]


def ddmin(items: Sequence[T], fails: Callable[[list[T]], bool]) -> list[T]:
    """A 1-minimal subset of ``items`` for which ``fails`` holds.

    :param items: a set that fails (``fails(items)`` is assumed True, not re-tested); its order
        is kept in the result.
    :param fails: the test; called at most once per distinct subset (results are cached).
    :return: the subset; ``items`` itself when no smaller one fails (every item is needed).
    """
    cache: dict[tuple, bool] = {tuple(items): True}

    def test(sub: list[T]) -> bool:
        key = tuple(sub)
        if key not in cache:
            cache[key] = bool(fails(sub))
        return cache[key]

    current = list(items)
    n = 2
    while len(current) >= 2:
        chunks = _chunks(current, n)
        reduced = False
        for c in chunks:
            if test(c):
                current, n, reduced = c, 2, True
                break
        if not reduced:
            for c in chunks:
                comp = [x for x in current if x not in c]
                if comp and test(comp):
                    current, n, reduced = comp, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= len(current):
                break
            n = min(len(current), 2 * n)
    return current


__all__ = ["ddmin"]
