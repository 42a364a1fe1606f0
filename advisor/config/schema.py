"""The schema of one configuration scope file (TOML), as pydantic v2 models.

Every scope (defaults, site, user, environment, command line: :mod:`advisor.config.scopes`)
has this shape; unknown keys and wrong types are refused.  ``docs/config.schema.json`` is
``ScopeFile.model_json_schema()`` committed (``advisor config schema`` prints it; a test keeps
the two equal).  ``docs/config.md`` describes each section and how scopes merge.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field, StringConstraints

from advisor.models import Model, Scalar

__all__ = ["Pin", "SettingsSection", "RecommendationsSection", "LauncherSection",
           "PluginsSection", "FleetSection", "StoreSection", "ModulesSection", "CheckSection",
           "ScopeFile", "SECTIONS", "json_schema"]

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

    k: Optional[float] = Field(None, ge=0, description="outlier rule: median +- k*MAD (--k)")
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


class CheckSection(Model):
    """``[check]``: what ``advisor emit -f nhc`` / ``-f slurm-healthcheck`` write into the node
    health check (docs/cluster.md, "Node health")."""

    command: Optional[str] = Field(None, description="the advisor command on the nodes, words "
                                   "separated by spaces (e.g. /opt/advisor/bin/advisor); "
                                   "default: the advisor that emits, by its absolute path")
    profiles: Optional[str] = Field(None, description="directory of the class profiles on the "
                                    "nodes (<class>.toml, as advisor fleet report names them); "
                                    "default /etc/advisor/classes")
    quick_s: Optional[float] = Field(None, gt=0, description="advisor check --quick-s: seconds "
                                     "the short measurement may take (default 8)")
    facts_only: Optional[bool] = Field(None, description="advisor check --facts-only: compare "
                                       "the class facts only, no measurement (for nodes that "
                                       "run jobs; default false)")
    timeout_s: Optional[int] = Field(None, ge=1, le=3600, description="NHC's check_cmd_output "
                                     "-t: seconds before NHC stops the check (default 20; at "
                                     "most NHC's TIMEOUT, 30 by default)")
    scontrol: Optional[str] = Field(None, description="scontrol's absolute path for the Slurm "
                                    "HealthCheckProgram (default: scontrol found on PATH when "
                                    "emitting, else /usr/bin/scontrol)")


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


#: The top-level tables, in the order ``advisor config list`` shows them.
SECTIONS = tuple(ScopeFile.model_fields)


def json_schema() -> dict:
    """The JSON schema of a scope file (``docs/config.schema.json``), with its ``$id`` title."""
    schema = ScopeFile.model_json_schema()
    schema["title"] = "hpc-advisor configuration scope (config.toml)"
    return schema
