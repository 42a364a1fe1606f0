"""hpc-advisor: measured runtime settings for HPC machines.

Public entry points for plugin authors: ``advisor.hookimpl`` (the pluggy marker),
``advisor.models`` (the schema), ``advisor.probe`` (the probe contract), ``advisor.knobs``
(knob records) and ``advisor.measure`` (the measurement harness).
"""

import pluggy

__version__ = "0.1.0"

#: Marker for hook implementations: ``@advisor.hookimpl def advisor_register_probes(register): ...``
hookimpl = pluggy.HookimplMarker("advisor")

__all__ = ["__version__", "hookimpl"]
