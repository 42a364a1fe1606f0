"""Wall time of ``advisor lint``: parsing and checking, and the command as users run it.

Prints, in seconds (median and max of N runs): the library path (parse + generic checks of a
generated env file with 1000 assignments against the installed mpivars list, tool output cached),
the first-call cost of reading the installed lists (mpivars, ld.so --list-tunables), and the
command ``advisor lint FILE`` / ``advisor lint --env`` end to end (which includes facts detection
and the plugins' own checks, e.g. mpich-cma's live sibling process_vm_readv test).

Then the growth with size (issue 28: a 10 MB env file read in 2 s at most, in time linear in its
size): for env files of 10 KB, 100 KB, 1 MB and 10 MB, the seconds per MB of the parse path
(``parse_env_text``, wall and CPU) and of ``advisor lint FILE`` end to end, and the same for a
file whose first line opens a quote it never closes (one finding, the rest still read); then
the same two for Tcl modulefiles (``setenv`` lines; the first line opens a brace, which Tcl's
``info complete`` is asked about: it was asked once per later line, over the whole text so far,
until the reader kept the brace depth itself).  Linear growth shows as a flat seconds-per-MB
column.  ``--sizes-only`` prints the growth table alone.
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
#: File sizes for the growth table (bytes): the issue's 10 KB to 10 MB.
SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
#: Runs per size in the growth table (the median is printed): parse path, command.
GROWTH_RUNS, COMMAND_RUNS = 3, 1
#: Misspelt names in a growth file (every 7th of the first lines): each costs the checks a
#: near-miss search (about 10 ms here), which would hide the reading in the command's time.
TYPOS = 100


def _stats(xs: list[float]) -> str:
    return f"{statistics.median(xs):9.4f} {max(xs):9.4f}"


def env_text(size: int, names: list[str], *, unclosed: bool = False, tcl: bool = False) -> str:
    """An env file of about ``size`` bytes: ``export NAME=value`` lines over ``names`` (every
    7th of the first ``7 * TYPOS`` names misspelt), every third value quoted; with
    ``unclosed``, a first line opening a quote it never closes.  With ``tcl``, a Tcl modulefile
    of ``setenv NAME value`` lines instead, every third value braced, and ``unclosed`` opens a
    brace on the first line (Tcl reads every later line inside it)."""
    if tcl:
        lines = ["#%Module1.0"] + (["setenv OPENED_HERE {never closed"] if unclosed else [])
    else:
        lines = ['export OPENED_HERE="never closed'] if unclosed else []
    total, i = 0, 0
    while total < size:
        name = names[i % len(names)] + ("X" if i % 7 == 0 and i < 7 * TYPOS else "")
        if tcl:
            lines.append(f"setenv {name} " + (f"{{{i}}}" if i % 3 == 0 else str(i)))
        else:
            lines.append(f"export {name}=" + (f"'{i}'" if i % 3 == 0 else str(i)))
        total += len(lines[-1]) + 1
        i += 1
    return "\n".join(lines) + "\n"


def growth(names: list[str]) -> None:
    """Print the seconds per MB of the parse path and of ``advisor lint FILE`` (its time over
    that of the 10 KB file: start-up and facts detection are the same at every size)."""
    from advisor import lint

    print(f"\n{'file':<24} {'MB':>6} {'parse s':>8} {'parse s/MB':>11} {'cpu s/MB':>9} "
          f"{'lint FILE s':>12} {'(s - 10 KB)/MB':>15} {'problems':>9}")
    with tempfile.TemporaryDirectory() as d:
        for tcl, unclosed in ((False, False), (False, True), (True, False), (True, True)):
            base = None
            suffix = ".tcl" if tcl else ".sh"
            for size in SIZES:
                text = env_text(size, names, unclosed=unclosed, tcl=tcl)
                mb = len(text.encode()) / 1e6
                wall, cpu = [], []
                for _ in range(GROWTH_RUNS):
                    t0, c0 = time.perf_counter(), time.process_time()
                    entries = lint.parse_env_text(text, path="bench" + suffix)
                    wall.append(time.perf_counter() - t0)
                    cpu.append(time.process_time() - c0)
                problems = [e.line for e in entries if e.problem]
                path = Path(d) / ("bench" + suffix)
                path.write_text(text)
                cmd = []
                for _ in range(COMMAND_RUNS):
                    t0 = time.perf_counter()
                    subprocess.run(ADVISOR + ["lint", str(path)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
                    cmd.append(time.perf_counter() - t0)
                label = {(False, False): "env file", (False, True): "unclosed quote, line 1",
                         (True, False): "Tcl modulefile",
                         (True, True): "Tcl, unclosed brace"}[(tcl, unclosed)]
                t_cmd = statistics.median(cmd)
                base = base or (t_cmd, mb)
                per_mb = f"{(t_cmd - base[0]) / (mb - base[1]):15.3f}" if mb > base[1] else \
                    f"{'(base)':>15}"
                print(f"{label:<24} {mb:6.2f} {statistics.median(wall):8.3f} "
                      f"{statistics.median(wall) / mb:11.3f} {statistics.median(cpu) / mb:9.3f} "
                      f"{t_cmd:12.2f} {per_mb} {str(problems[:3]):>9}")


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
    if "--sizes-only" in sys.argv[1:]:
        growth(names)
        return
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
    growth(names)


if __name__ == "__main__":
    main()
