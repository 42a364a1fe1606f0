"""Wall time of the CLI commands users run most: `advisor --help` and `advisor emit`.

Target (issue 2): <= 0.3 s each on the 2-core reference machine; heavy modules are imported
lazily for this.  Prints the median and max of N runs of each command, in seconds.

The package's bytecode is compiled first, as ``pip install`` does: with an editable install and
``PYTHONDONTWRITEBYTECODE=1`` (set on some shared machines), every run would otherwise compile
the changed modules again (~0.06 s measured here), which no installed copy pays.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

N = 10
REPO = Path(__file__).resolve().parents[1]
ADVISOR = [str(Path(sys.executable).parent / "advisor")]


def timed(argv: list[str]) -> list[float]:
    out = []
    for _ in range(N):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        out.append(time.perf_counter() - t0)
    return out


def compile_bytecode() -> None:
    """Write the .pyc files of the core and the built-in plugins (what ``pip install`` does)."""
    import compileall

    for d in (REPO / "advisor", REPO / "plugins"):
        compileall.compile_dir(str(d), quiet=1)


def main() -> None:
    compile_bytecode()
    examples = sorted((REPO / "profiles" / "examples" / "valid").glob("*.toml"))
    cases = {"advisor --help": ADVISOR + ["--help"]}
    if examples:
        cases["advisor emit --format env"] = ADVISOR + ["emit", "--format", "env", "--profile",
                                                        str(examples[0])]
        cases["advisor emit --format lmod"] = ADVISOR + ["emit", "--format", "lmod", "--profile",
                                                         str(examples[0])]
    print(f"{'command':<32} {'median s':>9} {'max s':>9}  target 0.3 s  ({N} runs each)")
    for name, argv in cases.items():
        t = timed(argv)
        print(f"{name:<32} {statistics.median(t):9.3f} {max(t):9.3f}")


if __name__ == "__main__":
    main()
