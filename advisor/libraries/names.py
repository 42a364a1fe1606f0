"""Near-miss suggestions for a library's names, kept inside one family and one meaning.

A suggestion by spelling distance is offered only when all of these hold (so a typo is never
"corrected" into a different setting):

* the same component: the first ``_``/``.`` word after the library's canonical prefix
  (``CH4`` in ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD``, ``malloc`` in ``glibc.malloc.arena_max``),
  except between two one-word names (``UCX_TLSS``, ``UCX_TLS``), where it is the role word;
* the same role: the last word is the same word, allowing a typo (``ROLE_CUTOFF``), so an
  ``_ENABLE`` is never offered for a ``_THRESHOLD``;
* the same family: every suggestion shares the family (MPICH's MPI_T category, e.g. ``CH4``,
  ``COLLECTIVE``; glibc's ``glibc.<namespace>``) of the best match, and the family of the name
  itself when a recorded release listed it;
* the whole name is close (``SUGGEST_CUTOFF``).
"""

from __future__ import annotations

import difflib
import re
from typing import Iterable, Mapping, Optional

#: ``difflib.SequenceMatcher.ratio`` of the name's suffix (family prefix removed) above which a
#: listed name is offered as "did you mean".  Measured on the cvar-typos case against the 465
#: CVARs of MPICH 5.0.2: the intended names score 0.89 (OFI_ENABLE_TAGGED -> CH4_OFI_ENABLE_TAGGED)
#: to 0.98 (TRESHOLD -> THRESHOLD); unrelated names such as FOO_BAR score below 0.6.
SUGGEST_CUTOFF = 0.8
#: Ratio from which two last words are one role word with a typo: TRESHOLD/THRESHOLD 0.94,
#: MOD/MODE 0.86; distinct roles score far lower (ENABLE/THRESHOLD 0.13, SIZE/SZ 0.67,
#: KVAL/ALGORITHM 0.14).
ROLE_CUTOFF = 0.8
MAX_SUGGESTIONS = 3

_WORDS = re.compile(r"[_.]")


def suggest(key: str, candidates: Iterable[str], cutoff: float = SUGGEST_CUTOFF) -> list[str]:
    """Plain near misses of ``key`` (values, enum choices): ``difflib.get_close_matches``."""
    return difflib.get_close_matches(key, [c for c in candidates if c != key],
                                     n=MAX_SUGGESTIONS, cutoff=cutoff)


def _words(suffix: str) -> list[str]:
    return [w for w in _WORDS.split(suffix) if w]


def same_role(a: str, b: str) -> bool:
    """True when the last words of ``a`` and ``b`` are one word, up to a typo."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return False
    x, y = wa[-1].lower(), wb[-1].lower()
    return x == y or difflib.SequenceMatcher(None, x, y).ratio() >= ROLE_CUTOFF


def suggest_in_family(name: str, pool: Mapping[str, Optional[str]], prefix: str = "",
                      family: Optional[str] = None) -> list[str]:
    """Near misses of ``name`` among ``pool`` (candidate -> family or None), compared without
    the shared ``prefix``, under the rules of this module.  ``family``: the name's own family
    when known (a name an older release listed)."""
    strip = len(prefix) if prefix and name.startswith(prefix) else 0
    key = name[strip:]
    words = _words(key)
    if not words:
        return []
    by_key: dict[str, str] = {}
    for cand in pool:
        if cand == name:
            continue
        ck = cand[len(prefix):] if prefix and cand.startswith(prefix) else cand
        cw = _words(ck)
        # a one-word name (UCX_TLSS) is its own component and role: the role rule decides
        one_word = len(words) == 1 == len(cw)
        if not cw or (cw[0] != words[0] and not one_word) or not same_role(key, ck):
            continue
        if family is not None and pool[cand] is not None and pool[cand] != family:
            continue
        by_key[ck] = cand
    got = [by_key[g] for g in difflib.get_close_matches(key, list(by_key), n=MAX_SUGGESTIONS,
                                                        cutoff=SUGGEST_CUTOFF)]
    if got:
        fam = pool[got[0]]
        got = [g for g in got if pool[g] == fam]
    return got
