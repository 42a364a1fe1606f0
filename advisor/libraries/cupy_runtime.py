"""Apply a profile's CuPy settings inside a running Python program.

CuPy reads only one pool environment variable (``CUPY_GPU_MEMORY_LIMIT``) and none that selects
the pool type, so pool policy for CuPy programs must be applied from Python (CuPy user guide,
"Memory Management").  ``configure_cupy(profile)`` does that from the profile's settings with
library ``"cupy"`` (``advisor.libraries.cupy.NAME``).  Public entry point: ``advisor.runtime``.

==========================  =====================================================================
setting (kind)              effect
==========================  =====================================================================
``pool`` (config)           ``MemoryPool`` (CuPy's default), ``MemoryAsyncPool`` (cudaMallocAsync,
                            CuPy >= 9.0) or ``none`` (plain cudaMalloc), installed with
                            ``cupy.cuda.set_allocator``
``pool_limit`` (config)     ``set_limit`` of that pool: bytes (``"1073741824"``) or a percentage of
                            device memory (``"90%"``)
``CUPY_GPU_MEMORY_LIMIT``   the same limit, used when no ``pool_limit`` config setting is present
(env)                       (CuPy reads the variable only at import)
==========================  =====================================================================

The core never imports plugins: this module only reads ``Setting`` records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from advisor.errors import AdvisorError, BadInputError
from advisor.libraries.cupy import NAME
from advisor.models import Profile

POOLS = ("MemoryPool", "MemoryAsyncPool", "none")


class CupyUnavailable(AdvisorError):
    """CuPy is not importable, too old for the asked pool, or sees no CUDA device."""


@dataclass(frozen=True)
class CupyPlan:
    """What ``configure_cupy`` applies.

    Attributes:
        pool: "MemoryPool", "MemoryAsyncPool", "none", or None (leave CuPy's allocator alone).
        limit_bytes: pool limit in bytes, or None.
        limit_fraction: pool limit as a fraction of device memory (0 < f <= 1), or None.
        sources: setting name -> "probe:recommendation" it came from.
    """

    pool: Optional[str] = None
    limit_bytes: Optional[int] = None
    limit_fraction: Optional[float] = None
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.pool is None and self.limit_bytes is None and self.limit_fraction is None


def parse_limit(text: str, *, where: str = "pool_limit") -> tuple[Optional[int], Optional[float]]:
    """``"1073741824"`` / ``"1GiB"`` -> (bytes, None); ``"90%"`` -> (None, 0.9).

    :raises BadInputError: not a size or percentage (names ``where``).
    """
    from pydantic import ByteSize, TypeAdapter, ValidationError

    t = str(text).strip()
    if t.endswith("%"):
        try:
            f = float(t[:-1]) / 100.0
        except ValueError as exc:
            raise BadInputError(f"{where}={text!r}: not a percentage") from exc
        if not 0 < f <= 1:
            raise BadInputError(f"{where}={text!r}: must be in (0%, 100%]")
        return None, f
    try:
        n = int(TypeAdapter(ByteSize).validate_python(t))
    except (ValidationError, ValueError) as exc:
        raise BadInputError(f"{where}={text!r}: not a size in bytes or a percentage") from exc
    if n < 0:
        raise BadInputError(f"{where}={text!r}: must be >= 0 bytes")
    return n, None


def _as_profile(profile: Union[Profile, str, Path, None]) -> Profile:
    from advisor import profile as store

    if isinstance(profile, Profile):
        return profile
    path = store.default_profile_path() if profile is None else Path(profile)
    return store.load_profile(path)


def plan_from_settings(settings) -> CupyPlan:
    """The CuPy pool type and limit of ``settings``: ``(origin, Setting)`` pairs, origin
    ``"probe:recommendation"``; settings of other libraries are ignored (pure).

    :raises BadInputError: a bad pool name or limit value.
    """
    pool: Optional[str] = None
    limit: Optional[str] = None
    env_limit: Optional[str] = None
    sources: dict[str, str] = {}
    for origin, s in settings:
        if s.library != NAME:
            continue
        if s.kind == "config" and s.name == "pool":
            if str(s.value) not in POOLS:
                raise BadInputError(f"setting cupy pool={s.value!r} ({origin}): expected one of "
                                    f"{', '.join(POOLS)}")
            pool, sources["pool"] = str(s.value), origin
        elif s.kind == "config" and s.name == "pool_limit":
            limit, sources["pool_limit"] = str(s.value), origin
        elif s.kind == "env" and s.name == "CUPY_GPU_MEMORY_LIMIT":
            env_limit, sources["CUPY_GPU_MEMORY_LIMIT"] = str(s.value), origin
    text = limit if limit is not None else env_limit
    lb, lf = parse_limit(text, where="pool_limit" if limit is not None else "CUPY_GPU_MEMORY_LIMIT") \
        if text is not None else (None, None)
    return CupyPlan(pool=pool, limit_bytes=lb, limit_fraction=lf, sources=sources)


def cupy_plan(profile: Union[Profile, str, Path, None]) -> CupyPlan:
    """The CuPy pool type and limit a profile recommends (pure for a ``Profile``).

    :param profile: a ``Profile``, a profile file path, or None for this host's stored profile.
    :raises BadInputError: a bad pool name or limit value in the profile; a missing/invalid file
        (``ProfileError``).
    """
    prof = _as_profile(profile)
    return plan_from_settings((f"{res.probe}:{rec.id}", s) for res, rec, s in
                              prof.settings(kinds=("env", "config"), include_defaults=True))


def configure_cupy(profile: Union[Profile, str, Path, None] = None) -> Any:
    """Install the profile's CuPy pool type and limit in this process.

    :param profile: a ``Profile``, a profile file path, or None for this host's stored profile.
    :return: ``(plan, pool)``: the ``CupyPlan`` applied and the pool object now serving
        allocations (None for ``pool="none"``; CuPy's default pool when the profile names none).
    :raises CupyUnavailable: CuPy cannot be imported, is older than 9.0 for ``MemoryAsyncPool``,
        or has no CUDA device to apply the limit to.
    :raises BadInputError: bad values in the profile.
    """
    return apply_cupy_plan(cupy_plan(profile))


def apply_cupy_plan(plan: CupyPlan) -> Any:
    """Install ``plan``'s pool type and limit in this process (what ``configure_cupy`` does
    after reading the profile; the ``cupy`` emit format writes a snippet that calls this with
    the plan as literals).

    :return: ``(plan, pool)``, as ``configure_cupy``.
    :raises CupyUnavailable: as ``configure_cupy``.
    """
    try:
        import cupy
    except ImportError as exc:
        raise CupyUnavailable(f"configure_cupy: CuPy is not importable: {exc}") from exc
    try:
        if plan.pool == "none":
            cupy.cuda.set_allocator(None)
            return plan, None
        if plan.pool == "MemoryAsyncPool":
            if not hasattr(cupy.cuda, "MemoryAsyncPool"):
                raise CupyUnavailable(f"configure_cupy: MemoryAsyncPool needs CuPy >= 9.0 "
                                      f"(installed {cupy.__version__})")
            pool = cupy.cuda.MemoryAsyncPool()
            cupy.cuda.set_allocator(pool.malloc)
        elif plan.pool == "MemoryPool":
            pool = cupy.cuda.MemoryPool()
            cupy.cuda.set_allocator(pool.malloc)
        else:
            pool = cupy.get_default_memory_pool()
        if plan.limit_bytes is not None:
            pool.set_limit(size=plan.limit_bytes)
        elif plan.limit_fraction is not None:
            pool.set_limit(fraction=plan.limit_fraction)
    except CupyUnavailable:
        raise
    except Exception as exc:  # CUDA runtime errors: no device, driver too old
        raise CupyUnavailable(f"configure_cupy: {type(exc).__name__}: {exc}") from exc
    return plan, pool
