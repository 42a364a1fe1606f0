"""Run by ``spack python`` (tests/formats/test_spack_site.py): what Spack itself reads from the
configuration scopes and the package repository, printed as JSON on stdout.

- ``rules SPEC...``: for each spec, the ``environment`` block Spack's module code merges for it
  from ``modules:default:lmod`` (``spack.modules.common.merge_config_rules``, the function
  ``spack module lmod refresh`` calls for every installed spec);
- ``package NAME``: the package's dependencies (``[name, versions, when, types]``) and
  variants (name -> description), as ``spack.repo`` loads them.

Imports Spack, so it runs only under ``spack python``; it is never collected by pytest.
"""

import json
import sys

import spack.config
import spack.deptypes
import spack.repo
import spack.spec
from spack.modules.common import merge_config_rules


def rules(specs):
    conf = spack.config.get("modules:default:lmod")
    return {s: {action: dict(names) for action, names in
                merge_config_rules(conf, spack.spec.Spec(s)).get("environment", {}).items()}
            for s in specs}


def package(name):
    cls = spack.repo.PATH.get_pkg_class(name)
    deps = [[dep_name, str(dep.spec.versions), str(when),
             list(spack.deptypes.flag_to_tuple(dep.depflag))]
            for when, by_name in cls.dependencies.items()
            for dep_name, dep in by_name.items()]
    variants = {v: entry[0].description for v, entry in cls.variants.items()}
    return {"dependencies": sorted(deps), "variants": variants}


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    print(json.dumps(rules(args) if mode == "rules" else package(args[0])))
