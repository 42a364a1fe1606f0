"""Knob records of the memory-pool plugin: DLA-Future, Umpire (in code) and CuPy settings.

Sources: DLA-Future ``include/dlaf/init.h`` / ``src/init.cpp`` (v0.6.0 and v0.7.0 tags; the v0.7.0
release notes list the rename of ``*_INITIAL_BYTES`` to ``*_INITIAL_BLOCK_BYTES``), Umpire
``src/umpire/strategy/QuickPool.hpp`` and ``DynamicPoolList.hpp`` (alignment argument since
v4.0.0), CuPy ``cupy/cuda/memory.pyx`` and the "Memory Management" user guide
(``CUPY_GPU_MEMORY_LIMIT`` since PR #2113, v6.0.0; ``MemoryAsyncPool`` since v9.0.0).
"""

from __future__ import annotations

from advisor.knobs import Knob, VersionedDefault

from . import model

DLAF_SOURCE = ("eth-cscs/DLA-Future src/init.cpp (v0.7.0: DLAF_UMPIRE_*_MEMORY_POOL_*; "
               "draft PR #1143 for the 2 MiB alignment)")
DLAF_OLD_SOURCE = "eth-cscs/DLA-Future src/init.cpp at v0.6.0 (renamed in v0.7.0)"
UMPIRE_SOURCE = "LLNL/Umpire src/umpire/strategy/QuickPool.hpp, DynamicPoolList.hpp; LLNL/Umpire#881"
CUPY_SOURCE = "cupy/cupy cupy/cuda/memory.pyx; docs.cupy.dev user guide 'Memory Management'; PR #2113"

DLAF_NEW = ">=0.7"
DLAF_OLD = "<0.7"


def dlaf_name(side: str, field: str) -> str:
    """``DLAF_UMPIRE_{HOST,DEVICE}_MEMORY_POOL_<FIELD>`` for side "host" or "device"."""
    return f"DLAF_UMPIRE_{side.upper()}_MEMORY_POOL_{field}"


def umpire_name(side: str, strategy: str, arg: str) -> str:
    """Config setting name of an Umpire pool argument, qualified by the pool it is for:
    ``device.QuickPool.alignment`` (a program has one host and one device pool to configure)."""
    return f"{side}.{strategy}.{arg}"


def _dlaf_cli(name: str) -> str:
    return "--dlaf:" + name[len("DLAF_"):].lower().replace("_", "-")


def knobs() -> list[Knob]:
    """All knob records this plugin registers."""
    out: list[Knob] = []
    for side in ("host", "device"):
        fields = [
            ("INITIAL_BLOCK_BYTES", "bytes", model.DLAF_BLOCK_BYTES,
             f"size of the first block of the {side} Umpire pool"),
            ("NEXT_BLOCK_BYTES", "bytes", model.DLAF_BLOCK_BYTES,
             f"minimum size of every later block of the {side} pool (the grow-by)"),
            ("ALIGNMENT_BYTES", "bytes", model.DLAF_ALIGNMENT_BYTES,
             f"alignment of {side} pool allocations; Umpire asks block + alignment from the "
             "backing allocator (Umpire#881)"),
            ("COALESCING_FREE_RATIO", "float", 1.0,
             f"{side} pool coalescing heuristic: free-ratio threshold"),
            ("COALESCING_REALLOCATION_RATIO", "float", 1.0,
             f"{side} pool coalescing heuristic: reallocation ratio"),
        ]
        for field, typ, default, desc in fields:
            name = dlaf_name(side, field)
            out.append(Knob(
                library="dla-future", name=name, type=typ,
                unit="bytes" if typ == "bytes" else None,
                minimum=0, defaults=[VersionedDefault(versions=DLAF_NEW, value=default)],
                versions=DLAF_NEW, aliases=[_dlaf_cli(name)], description=desc,
                source=DLAF_SOURCE))
        old = dlaf_name(side, "INITIAL_BYTES")
        out.append(Knob(
            library="dla-future", name=old, type="bytes", unit="bytes", minimum=0,
            defaults=[VersionedDefault(versions=DLAF_OLD, value=model.DLAF_BLOCK_BYTES)],
            versions=DLAF_OLD, renamed_to=dlaf_name(side, "INITIAL_BLOCK_BYTES"),
            aliases=[_dlaf_cli(old)],
            description=f"initial size of the {side} Umpire pool (DLA-Future <= 0.6)",
            source=DLAF_OLD_SOURCE))
    for side in ("host", "device"):
        for strategy in ("QuickPool", "DynamicPoolList"):
            for arg, default, versions, desc in (
                ("first_minimum_pool_allocation_size", model.UMPIRE_FIRST_BLOCK_BYTES, None,
                 "size of the first block"),
                ("next_minimum_pool_allocation_size", model.UMPIRE_NEXT_BLOCK_BYTES, None,
                 "minimum size of every later block (the grow-by)"),
                ("alignment", model.UMPIRE_ALIGNMENT_BYTES, ">=4.0",
                 "alignment of allocations; the backing request is block + alignment "
                 "(Umpire#881)"),
            ):
                out.append(Knob(
                    library="umpire", name=umpire_name(side, strategy, arg), kind="config",
                    type="bytes", unit="bytes", minimum=0,
                    defaults=[VersionedDefault(versions=versions or ">=0", value=default)],
                    versions=versions,
                    description=f"{strategy} constructor argument of the program's {side} pool: "
                                f"{desc}. Umpire reads no environment variable for pool sizes; "
                                "the program sets it in code.",
                    source=UMPIRE_SOURCE))
    out.append(Knob(
        library="cupy", name="CUPY_GPU_MEMORY_LIMIT", type="str", versions=">=6.0",
        description="limit of CuPy's device memory pool: bytes or a percentage of device "
                    "memory such as '90%'; the only pool environment variable CuPy reads",
        source=CUPY_SOURCE))
    out.append(Knob(
        library="cupy", name="pool", kind="config", type="enum",
        allowed=["MemoryPool", "MemoryAsyncPool", "none"],
        defaults=[VersionedDefault(versions=">=0", value="MemoryPool")],
        description="device allocator installed with cupy.cuda.set_allocator "
                    "(MemoryAsyncPool needs CuPy >= 9.0); applied by advisor.runtime.configure_cupy",
        source=CUPY_SOURCE))
    out.append(Knob(
        library="cupy", name="pool_limit", kind="config", type="str",
        description="argument of MemoryPool.set_limit: bytes, or a percentage of device memory; "
                    "applied by advisor.runtime.configure_cupy",
        source=CUPY_SOURCE))
    return out
