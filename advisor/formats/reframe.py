"""ReFrame snippet (format ``reframe``): a partition's ``env_vars`` and a performance
``reference`` dictionary, as a Python module of two literals.

A ReFrame site configuration is a Python file (``reframe.core.config.load_config``); the site
imports this snippet there and in its tests::

    spec = importlib.util.spec_from_file_location("advisor_partition", "/site/advisor-cpu.py")
    advisor_partition = importlib.util.module_from_spec(spec); spec.loader.exec_module(...)
    site_configuration = {"systems": [{..., "partitions": [{..., "name": "cpu",
                          "env_vars": advisor_partition.env_vars}]}]}
    # in a RegressionTest:  reference = advisor_partition.reference

``env_vars``: ``[[NAME, value], ...]`` (ReFrame configuration reference,
``systems.partitions.env_vars``: a list of ``[name, value]`` pairs), one per environment
setting, sorted by name.  ReFrame writes ``export NAME=value`` unquoted into the job script and
expands the value in its own process (``reframe/core/runtime.py``, ``loadenv``), so a value with
a character a POSIX shell would interpret (anything outside :data:`SHELL_PLAIN`) is refused
(``EmitError`` naming the setting): use ``-f env`` or a module for it.  List variables
(``GLIBC_TUNABLES``) are written as their full value, overwriting the job's existing one.

``reference``: ``{"*": {VARIABLE: (value, lower, upper, unit)}}`` (ReFrame's
``RegressionTest.reference``; ``"*"`` matches every system and partition: replace it with
``"system:partition"``).  The figures are the profile's verifications with verdict
``confirmed``: ``value`` is the measured ratio advised / baseline (``Verification.ratio``, > 1
is better, unit ``ratio``) to ``DIGITS`` (3) significant digits (``advisor.specs.units.DIGITS``:
a fourth digit is below the smallest recorded A/A noise floor, 0.8 %); ``lower`` and ``upper``
(the fractions ReFrame's thresholds are) cover both the bootstrap confidence interval
``[ci_low, ci_high]`` and the A/A noise floor (``value ∓ noise_floor·value``, when recorded),
relative to the rounded value and rounded outward to whole percent (:data:`STEP`), so
``lower <= 0 <= upper`` and a re-measurement that differs by no more than two identical runs
do is not a failure.  These are one machine's figures: the health test of a class of nodes,
with tolerances from the class's spread, is format ``reframe-test``.  Verifications with
another verdict, or without a ratio and interval, are listed as left out.  The variable
name is the recommendation id (``probe:rec``) with every character outside ``[A-Za-z0-9_]``
replaced by ``_``: ReFrame reads ``:`` in reference keys as a scope separator.

``parse`` reads ``env_vars`` back with ``ast.literal_eval``: nothing in the file runs.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Optional

from advisor.specs.writing import (env_items, header_lines, left_out_comment, one_line,
                                    refuse_unsafe)
from advisor.specs.entry import (EnvEntry, entry_or_problem, is_scalar, python_assignments,
                                   scalar_text, unreadable)
from advisor.formats import has_line
from advisor.formats.quoting import python_quote
from advisor.specs.units import DIGITS

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection
    from advisor.models import Verification

NAME = "reframe"
DESCRIPTION = "ReFrame partition env_vars and performance reference (Python snippet)"
EXTENSION = "py"
#: Its shape decides (a ``.py`` file is no format by its suffix).
SUFFIXES: tuple[str, ...] = ()
#: Its shape decides over the suffix it shares with other Python files.
SNIFF_OVER_SUFFIX = True


def sniff(text: str) -> bool:
    """Whether ``text`` is the snippet this format writes (``env_vars`` and
    ``reference``)."""
    return has_line(text, "env_vars = [") and has_line(text, "reference = {")

#: Values made only of these characters mean the same to a POSIX shell unquoted (no field
#: splitting, globbing, expansion, quoting or tilde: POSIX.1-2017 XCU 2.2, 2.6).
SHELL_PLAIN = re.compile(r"^[A-Za-z0-9_.,:/=+@%-]*$")
#: The verdict whose ratio becomes a reference (``advisor.models.Verification.verdict``).
REFERENCE_VERDICT = "confirmed"
#: ReFrame's scope key matching every system and partition.
ANY_SCOPE = "*"
#: The unit of a verification ratio (advised / baseline).
RATIO_UNIT = "ratio"
#: Rounding step of the written thresholds (fractions of the value): whole percent.
STEP = 0.01


def reframe_unsafe(value: str) -> Optional[str]:
    """Why ReFrame's unquoted ``export NAME=value`` would change ``value``, or None."""
    if SHELL_PLAIN.match(value):
        return None
    bad = next(ch for ch in value if not SHELL_PLAIN.match(ch))
    return (f"holds {bad!r}, which the job script's unquoted 'export NAME=value' (ReFrame) "
            "would let the shell interpret")


def variable_name(recommendation: str) -> str:
    """The reference variable name of a recommendation id (``probe:rec`` -> ``probe_rec``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", recommendation)


def round_sig(x: float, digits: int = DIGITS) -> float:
    """``x`` to ``digits`` significant digits (``12345.6`` -> ``12300.0``)."""
    return float(f"{x:.{digits}g}")


def thresholds(value: float, low: float, high: float) -> tuple[float, float]:
    """``(lower, upper)``: ReFrame's thresholds (fractions of ``value`` > 0) that cover
    ``[low, high]``, rounded outward to :data:`STEP`; ``lower`` in ``[-1, 0]``, ``upper >= 0``."""
    lo = math.floor(round((low / value - 1.0) / STEP, 9)) * STEP
    hi = math.ceil(round((high / value - 1.0) / STEP, 9)) * STEP
    return round(max(min(lo, 0.0), -1.0), 2), round(max(hi, 0.0), 2)



def reference_entry(v: "Verification") -> Optional[tuple[float, float, float, str]]:
    """``(value, lower, upper, unit)`` of a confirmed verification with a ratio and interval,
    else None (module docstring: the value rounded, the thresholds covering the interval and
    the A/A noise floor, rounded outward)."""
    if v.verdict != REFERENCE_VERDICT or v.ratio is None or v.ci_low is None \
            or v.ci_high is None or v.ratio <= 0:
        return None
    value = round_sig(v.ratio)
    floor = abs(v.noise_floor or 0.0) * value
    lower, upper = thresholds(value, min(v.ci_low, value - floor), max(v.ci_high, value + floor))
    return (value, lower, upper, RATIO_UNIT)


def render(sel: "Selection") -> str:
    """The snippet (module docstring).

    :raises EmitError: a value the job script's unquoted export would change
        (:func:`reframe_unsafe`).
    """
    lines = [f"# {line}" for line in header_lines(sel.profile)]
    lines += left_out_comment(sel, ("env",), fmt=NAME)
    plugins = set(sel.options.plugins) if sel.options.plugins is not None else None
    items = env_items(sel)
    # a reference only for advice this file deploys: a recommendation a scope excluded, one
    # not accepted, or one whose settings are set in code (config kind) expects no gain here
    written = {f"{s.probe}:{s.recommendation}" for i in items for s in i.sources}
    refs, skipped = [], []
    for v in sel.profile.verifications:
        if plugins is not None and v.recommendation.split(":", 1)[0] not in plugins:
            continue
        entry = reference_entry(v)
        if v.recommendation not in written:
            skipped.append(f"# reference left out: {one_line(v.recommendation)} (none of its "
                           "settings is in env_vars)")
        elif entry is None:
            why = v.reason or "no ratio with an interval"
            skipped.append(f"# reference left out: {one_line(v.recommendation)} "
                           f"(verdict {v.verdict}: {one_line(why)})")
        else:
            refs.append((variable_name(v.recommendation), v, entry))
    lines += skipped
    refuse_unsafe(items, reframe_unsafe, "use -f env or a module for this value")
    lines += ["", "#: ReFrame systems.partitions.env_vars: [name, value] pairs", "env_vars = ["]
    for item in items:
        if item.comment:
            lines.append(f"    # {item.comment}")
        if item.separator is not None:
            lines.append(f"    # {item.name} is a list ({one_line(repr(item.separator))}-"
                         "separated); env_vars cannot append, this overwrites it")
        lines.append(f"    [{python_quote(item.name)}, {python_quote(item.value)}],")
    lines += ["]", "", "#: RegressionTest.reference: (value, lower, upper, unit); lower and upper "
              "cover the confidence interval and the A/A noise floor, relative to the value, "
              "rounded outward to whole percent",
              "reference = {", f"    {python_quote(ANY_SCOPE)}: {{"]
    for name, v, (value, lower, upper, unit) in sorted(refs, key=lambda r: r[0]):
        lines.append(f"        # {one_line(v.recommendation)}: {v.verdict}, advised/baseline "
                     f"ratio ({DIGITS} significant digits)")
        lines.append(f"        {python_quote(name)}: ({value!r}, {lower!r}, {upper!r}, "
                     f"{python_quote(unit)}),")
    lines += ["    },", "}"]
    return "\n".join(lines) + "\n"


def parse(text: str, path: str) -> list[EnvEntry]:
    """The ``env_vars`` list of a snippet (``[[NAME, value], ...]``), read with
    ``ast.literal_eval``.

    :raises BadInputError: not Python syntax (line named).
    """
    import ast

    out: list[EnvEntry] = []
    for node in python_assignments(text, path, "env_vars", "ReFrame snippet"):
        if not isinstance(node.value, (ast.List, ast.Tuple)):
            out.append(unreadable(path, node.lineno, "env_vars is not a list literal"))
            continue
        for elt in node.value.elts:
            try:
                pair = ast.literal_eval(elt)
            except (ValueError, TypeError, SyntaxError):
                out.append(unreadable(path, elt.lineno, "env_vars entry is not a literal"))
                continue
            if not (isinstance(pair, (list, tuple)) and len(pair) == 2
                    and isinstance(pair[0], str) and is_scalar(pair[1])):
                out.append(unreadable(path, elt.lineno, "env_vars entry is not [NAME, value]"))
                continue
            out.append(entry_or_problem(pair[0], scalar_text(pair[1]), path, elt.lineno))
    return out
