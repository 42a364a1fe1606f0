#!/usr/bin/env python3
"""Dump Spack's own JSON schema of ``modules.yaml`` (``spack.schema.modules.schema``) as JSON.

Usage: ``scripts/spack-modules-schema.py SPACK_ROOT > tests/data/spack/modules-schema.json``

``SPACK_ROOT`` is a Spack checkout (``git clone https://github.com/spack/spack``); the script
puts its ``lib/spack`` and vendored ``lib/spack/external`` on ``sys.path`` and imports
``spack.schema.modules``, which needs nothing else (it imports ``spack.schema.environment``
and ``spack.schema.projections``).  The output is sorted JSON, so a regeneration from the same
Spack gives the same bytes.  tests/formats/test_deploy_tools.py validates the
``spack-modules`` format against it with ``jsonschema`` (tests/data/spack/README.md says which
Spack it came from).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: spack-modules-schema.py SPACK_ROOT", file=sys.stderr)
        return 2
    root = Path(argv[1])
    lib = root / "lib" / "spack"
    if not (lib / "spack" / "schema" / "modules.py").is_file():
        print(f"{root}: not a Spack checkout (no lib/spack/spack/schema/modules.py)",
              file=sys.stderr)
        return 2
    sys.path[:0] = [str(lib), str(lib / "external")]
    import spack.schema.modules  # noqa: PLC0415 - from the checkout named on the command line

    json.dump(spack.schema.modules.schema, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
