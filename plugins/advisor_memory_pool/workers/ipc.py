"""Worker: open a CUDA IPC memory handle (hex on argv) and report the seconds it took.

Run by ``measure.measure_device`` (``workers.IPC``) through ``advisor.measure.run_python`` as
``python -m advisor_memory_pool.workers.ipc HANDLE_HEX``; prints ``{"open_s": seconds}``.
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> dict:
    import cupy

    handle = bytes.fromhex(argv[0])
    rt = cupy.cuda.runtime
    t0 = time.perf_counter_ns()
    ptr = rt.ipcOpenMemHandle(handle)
    rt.deviceSynchronize()
    dt = (time.perf_counter_ns() - t0) * 1e-9
    rt.ipcCloseMemHandle(ptr)
    return {"open_s": dt}


if __name__ == "__main__":
    from advisor.measure import report

    report(main(sys.argv[1:]))
