"""The schema of one configuration scope file (TOML), as pydantic v2 models.

Every scope (defaults, site, user, environment, command line: :mod:`advisor.config.scopes`)
has this shape; unknown keys and wrong types are refused.  ``docs/config.schema.json`` is
``ScopeFile.model_json_schema()`` committed (``advisor config schema`` prints it; a test keeps
the two equal).  ``docs/config.md`` describes each section and how scopes merge.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Optional, Union

from pydantic import ConfigDict, Field, StringConstraints, field_validator

from advisor.models import Model, Scalar

__all__ = ["Pin", "SettingsSection", "RecommendationsSection", "LauncherSection",
           "PluginsSection", "FleetSection", "StoreSection", "ModulesSection", "CheckSection",
           "SpackSection", "ScopeFile", "SECTIONS", "json_schema"]

#: ``probe:recommendation-id``, as ``Verification.recommendation`` names a recommendation.
REC_REF = r"^[A-Za-z0-9_.-]+:[A-Za-z0-9_.:-]+$"


class Pin(Model):
    """A pinned setting written as a table: ``NAME = {value = 16384, reason = "..."}``."""

    value: Scalar = Field(description="the value emit writes, whatever the profile advises")
    library: Optional[str] = Field(None, description="the library whose knob declares NAME, "
                                   "when several do (e.g. mpich); default: the one knob")
    reason: Optional[str] = Field(None, description="why the site pins it (shown by explain "
                                  "and in the emitted comment)")


class SettingsSection(Model):
    """``[settings.pin]`` and ``[settings.exclude]``."""

    pin: dict[str, Union[Pin, Scalar]] = Field(
        default_factory=dict, description="NAME = value, or NAME = {value, library, reason}: "
        "emit writes this value; the name must be declared by a loaded plugin's knob record")
    exclude: dict[str, Union[str, bool]] = Field(
        default_factory=dict, description="NAME = \"reason\" (or true): emit never writes NAME; "
        "false in a higher scope lifts a lower scope's exclusion")


class RecommendationsSection(Model):
    """``[recommendations]``."""

    accept: list[str] = Field(
        default_factory=list, description="'probe:recommendation-id' items; when non-empty, "
        "emit writes only the settings of these recommendations (and the pins)",
        json_schema_extra={"items": {"pattern": REC_REF}})


class LauncherSection(Model):
    """``[launcher]``."""

    command: Optional[str] = Field(
        None, description="command that starts an MPI job; {nprocs} is replaced by the rank "
        "count, e.g. 'srun -n {nprocs}' (ADVISOR_LAUNCHER, --launcher)")


class PluginsSection(Model):
    """``[plugins]``: entry-point names (see ``advisor plugins``)."""

    enable: list[str] = Field(default_factory=list, description="when non-empty, load only "
                              "these plugins")
    disable: list[str] = Field(default_factory=list, description="never load these plugins "
                               "(ADVISOR_DISABLE_PLUGINS)")


class FleetSection(Model):
    """``[fleet]``: defaults of ``advisor fleet report``."""

    k: Optional[float] = Field(None, gt=0, allow_inf_nan=False, description="outlier rule: "
                               "median +- k*MAD (--k); finite, above 0")
    mad_floor: Optional[float] = Field(None, gt=0, lt=1, description="outlier rule: the least "
                                       "MAD, a fraction of the median (--mad-floor; 0.01); "
                                       "raise it to the run-to-run spread of one node's "
                                       "headline where nodes measure unsteadily (shared VMs)")
    expected: Optional[str] = Field(None, description="hostlist of the nodes that should have "
                                    "a profile, e.g. node[001-128] (--expected)")


class StoreSection(Model):
    """``[store]``."""

    profiles: Optional[str] = Field(None, description="directory where probe saves and "
                                    "show/emit look for this host's profile "
                                    "($ADVISOR_HOME/profiles)")


#: A library name as a key of ``[modules] mpi`` (``advisor.libraries.record``'s name rule).
LIBRARY_KEY = r"^[a-z0-9][a-z0-9-]*$"
#: A module name emit writes into a modulefile: letters, digits, ``_ . -`` and ``/`` between
#: parts that start with a letter, digit or ``_`` (no ``..``, no option, nothing Lua or Tcl reads
#: as code; ``advisor.formats.moddeps``).
MODULE_NAME = r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$"
#: A family name: Environment Modules 5.2 accepts only these (``proc family`` in modulecmd.tcl).
FAMILY_NAME = r"^[A-Za-z0-9_]+$"


class ModulesSection(Model):
    """``[modules]``: the MPI module the ``lmod``/``tcl`` modules depend on."""

    dependency: Optional[Literal["prereq", "depends_on", "family", "none"]] = Field(
        None, description="how the module depends on the MPI module it was measured with: "
        "prereq (loading fails until it is loaded), depends_on (loading loads it), family "
        "(the MPI family's loaded module must be it), none; default prereq "
        "(--module-dependency)")
    mpi: dict[Annotated[str, StringConstraints(pattern=LIBRARY_KEY)],
              Annotated[str, StringConstraints(pattern=MODULE_NAME)]] = Field(
        default_factory=dict, description="LIBRARY = \"module/name\": the site's module of "
        "each MPI library, e.g. mpich = \"mpich/4.3.2\"; default LIBRARY/VERSION from the "
        "profile (--mpi-module LIBRARY=NAME)")
    family: Optional[Annotated[str, StringConstraints(pattern=FAMILY_NAME)]] = Field(
        None, description="the family the site's MPI modules declare, for dependency = "
        "\"family\"; default MPI")


#: A word NHC's ``eval`` and POSIX sh read back unchanged without quotes
#: (``advisor.formats.healthcheck.PLAIN_WORD``); a command is such words, one space apart, and
#: a path on the nodes one absolute such word.
CHECK_WORD = r"[A-Za-z0-9_./:@%+=,-]+"
CHECK_COMMAND = rf"^{CHECK_WORD}( {CHECK_WORD})*$"
CHECK_PATH = rf"^/{CHECK_WORD}$"


class CheckSection(Model):
    """``[check]``: what ``advisor emit -f nhc`` / ``-f slurm-healthcheck`` write into the node
    health check (docs/cluster.md, "Node health")."""

    command: Optional[Annotated[str, StringConstraints(pattern=CHECK_COMMAND)]] = Field(
        None, description="the advisor command on the nodes, plain words one space apart (no "
        "quotes or shell characters; a blank always separates two words), e.g. "
        "/opt/advisor/bin/advisor; default: the advisor that emits, by its absolute path")
    profiles: Optional[Annotated[str, StringConstraints(pattern=CHECK_PATH)]] = Field(
        None, description="directory of the class profiles on the nodes, an absolute path "
        "(<class>.toml, as advisor fleet report names them); default /etc/advisor/classes")
    quick_s: Optional[float] = Field(None, gt=0, description="advisor check --quick-s: seconds "
                                     "the short measurement may take (default 8)")
    facts_only: Optional[bool] = Field(None, description="advisor check --facts-only: compare "
                                       "the class facts only, no measurement (for nodes that "
                                       "run jobs; default false)")
    timeout_s: Optional[int] = Field(None, ge=1, le=3600, description="NHC's check_cmd_output "
                                     "-t: seconds before NHC stops the check (default 20; at "
                                     "most NHC's TIMEOUT, 30 by default)")
    scontrol: Optional[Annotated[str, StringConstraints(pattern=CHECK_PATH)]] = Field(
        None, description="scontrol's absolute path for the Slurm HealthCheckProgram "
        "(default: scontrol found on PATH when emitting, else /usr/bin/scontrol)")


#: Keys Spack's ``lmod``/``tcl`` module blocks reserve for their own options
#: (``spack.schema.modules``: the properties of the ``lmod`` block besides ``all``;
#: tests/formats/test_spack_site.py compares them with tests/data/spack/modules-schema.json).
SPACK_MODULE_KEYWORDS = ("core_compilers", "core_specs", "defaults", "exclude",
                         "exclude_implicits", "filter_hierarchy_specs", "hash_length",
                         "hide_implicits", "hierarchy", "include", "naming_scheme", "projections",
                         "verbose")
#: A Spack spec constraint as a ``modules.yaml`` key takes it, without spaces and other than
#: those keywords: a package name with optional version, variants, compiler and dependency
#: parts (``hpl``, ``hpl@2.3+openmp``, ``^mpi``, ``%gcc@12``); Spack's spec grammar decides
#: the rest when it reads the file.
SPACK_SPEC = (rf"^(?!(?:{'|'.join(SPACK_MODULE_KEYWORDS)})$)"
              r"[A-Za-z0-9_^%][A-Za-z0-9_.@:=+~%^,-]*$")


class SpackSection(Model):
    """``[spack]``: defaults of ``advisor emit -f spack-modules`` (``spec_range`` also of
    ``-f easybuild-hooks``)."""

    # SPACK_SPEC's lookahead: Python's engine (pydantic's default Rust one has none)
    model_config = ConfigDict(extra="forbid", frozen=True, regex_engine="python-re")

    spec_range: Literal["exact", "minor", "major"] = Field(
        "exact", description="the versions a spack-modules package block or an easybuild-hooks "
        "entry covers: exact (mpich@5.0.2), minor "
        "(mpich@5.0, every 5.0.x) or major (mpich@5, every 5.x); Spack reads @5.0 as the "
        "range 5.0:5.0 (--spec-range)")
    every_program: Union[Literal["all", "separate"],
                         Annotated[list[Annotated[str, StringConstraints(pattern=SPACK_SPEC)]],
                                   Field(min_length=1)]] = Field(
        "all", description="where settings every program reads go (GLIBC_TUNABLES: a library "
        "whose record names Spack's 'all'): 'all' (every module), a list of package specs "
        "(['openmpi', 'mpich', 'hpl']), or 'separate' (the module of the hpc-advisor-tunables "
        "bundle package, packaging/spack)")

    @field_validator("every_program", mode="before")
    @classmethod
    def _placement(cls, value: object) -> object:
        """One clear message for a value that is neither a placement word nor a spec list."""
        if isinstance(value, str) and value not in ("all", "separate"):
            raise ValueError("expected 'all', 'separate' or a list of Spack specs such as "
                             "['openmpi', 'mpich']")
        if isinstance(value, list):
            bad = [v for v in value if not isinstance(v, str) or not re.match(SPACK_SPEC, v)]
            if not value:
                raise ValueError("an empty list places them nowhere; 'all' puts them in every "
                                 "module")
            if bad:
                raise ValueError(f"{bad[0]!r} is not a Spack spec a modules.yaml block can "
                                 "name (no spaces, not one of Spack's own keys such as "
                                 "'hierarchy')")
        return value


class ScopeFile(Model):
    """One scope's configuration file."""

    settings: SettingsSection = SettingsSection()
    recommendations: RecommendationsSection = RecommendationsSection()
    launcher: LauncherSection = LauncherSection()
    plugins: PluginsSection = PluginsSection()
    fleet: FleetSection = FleetSection()
    store: StoreSection = StoreSection()
    modules: ModulesSection = ModulesSection()
    check: CheckSection = CheckSection()
    spack: SpackSection = SpackSection()


#: The top-level tables, in the order ``advisor config list`` shows them.
SECTIONS = tuple(ScopeFile.model_fields)


def json_schema() -> dict:
    """The JSON schema of a scope file (``docs/config.schema.json``), with its ``$id`` title."""
    schema = ScopeFile.model_json_schema()
    schema["title"] = "hpc-advisor configuration scope (config.toml)"
    return schema
