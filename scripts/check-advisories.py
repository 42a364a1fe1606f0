#!/usr/bin/env python3
"""Check the advisories file (``advisor/libraries/data/advisories.toml``, or FILE).

Every record must read (``advisor.libraries.advisories.read``: required fields, an id of
``[a-z0-9-]``, PEP 440 specifier sets, ``when`` facts of the right type, https sources, a
regular expression for the value, a summary short enough to be our own words) and fit the
library records (``check_against``: a known library, the setting in that library's family).
The libraries are the built-in records plus UCX (registered by the Open MPI plugin).

Prints one line per record (id, library, versions, first source) on stdout; each problem is
one line on stderr and the exit status is 2.

Usage: ``python scripts/check-advisories.py [FILE]``
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from advisor.libraries import builtin_libraries, ucx
    from advisor.libraries.advisories import DATA, AdvisoryError, check_against, read

    path = Path(argv[0]) if argv else DATA
    try:
        records = read(path)
    except AdvisoryError as exc:
        print(f"check-advisories: {exc}", file=sys.stderr)
        return 2
    libraries = builtin_libraries()
    libraries[ucx.NAME] = ucx.record()
    problems = check_against(records, libraries)
    for line in problems:
        print(f"check-advisories: {path}: {line}", file=sys.stderr)
    for a in records:
        print(f"{a.id}\t{a.library}{'/' + a.flavour if a.flavour else ''}\t"
              f"{' | '.join(a.versions)}\t{a.source[0]}")
    return 2 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
