"""Wall time of ``advisor lint``: parsing and checking, and the command as users run it.

Prints, in seconds (median and max of N runs): the library path (parse + generic checks of a
generated env file with 1000 assignments against the installed mpivars list, tool output cached),
the first-call cost of reading the installed lists (mpivars, ld.so --list-tunables), and the
command ``advisor lint FILE`` / ``advisor lint --env`` end to end (which includes facts detection
and the plugins' own checks, e.g. mpich-cma's live sibling process_vm_readv test).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = 5
ADVISOR = [str(Path(sys.executable).parent / "advisor")]


def _stats(xs: list[float]) -> str:
    return f"{statistics.median(xs):9.4f} {max(xs):9.4f}"


def main() -> None:
    from advisor import lint
    from advisor.facts import detect
    from advisor.plugins import collect, make_plugin_manager

    facts = detect(opencl=False)
    libraries = collect(make_plugin_manager(entry_points=False)).libraries
    t0 = time.perf_counter()
    cats = lint.installed_catalogues(facts, libraries=libraries)
    first = time.perf_counter() - t0
    names = sorted(cats["mpich"].entries) if "mpich" in cats else ["MPIR_CVAR_X"]
    lines = [f"export {names[i % len(names)]}{'' if i % 7 else 'X'}={i}" for i in range(1000)]
    text = "\n".join(lines) + "\n"
    lib = []
    for _ in range(N):
        t0 = time.perf_counter()
        lint.lint_entries(lint.parse_env_text(text, path="bench.sh"), facts=facts,
                          catalogues=cats, libraries=libraries)
        lib.append(time.perf_counter() - t0)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "site.sh"
        path.write_text("export MPIR_CVAR_CH4_IPC_CMA_P2P_TRESHOLD=16384\n")
        runs = {"advisor lint FILE": ADVISOR + ["lint", str(path)],
                "advisor lint --env": ADVISOR + ["lint", "--env"]}
        print(f"{'what':<44} {'median s':>9} {'max s':>9}  ({N} runs)")
        print(f"{'installed lists, first read (mpivars, ld.so)':<44} {first:9.4f} {first:9.4f}")
        print(f"{'lint_entries, 1000 assignments':<44} {_stats(lib)}")
        for name, argv in runs.items():
            ts = []
            for _ in range(N):
                t0 = time.perf_counter()
                subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                ts.append(time.perf_counter() - t0)
            print(f"{name:<44} {_stats(ts)}")


if __name__ == "__main__":
    main()
