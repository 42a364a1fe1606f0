"""ReFrame test (format ``reframe-test``): a complete ReFrame test file that runs the advisor's
own headline measurement, ``advisor check --profile CLASS --json``, on a partition and holds
each headline figure to its machine class's band.

Input: a class profile, the ``DIR/classes/<class>.toml`` that ``advisor fleet report`` writes;
its ``[fleet.headlines."<probe>:<figure>"]`` tables (``advisor.models_fleet.HeadlineBand``)
hold, per figure, the median of the class's nodes and the robust band ``median ∓ k·MAD`` the
fleet report flags outliers with (``advisor.fleet.outliers.robust_band``).  A profile without
them (one node's profile) is refused (``EmitError``): a single measurement's confidence
interval is not a tolerance a re-measurement on another node of the class can hold.

The file (ReFrame >= 4.6, one ``rfm.RunOnlyRegressionTest``) is imports, data, then the test:

* ``CLASS_PROFILE``: the class profile's path as emit read it, absolute
  (``Selection.source``); ``-S class_profile=PATH`` where the partition sees it elsewhere;
* ``FIGURES``: ReFrame variable -> ``(figure, value, lower, upper, unit)``, one per figure with
  a band; the test's ``reference`` is ``{"*": {variable: (value, lower, upper, unit)}}``;
* the job runs ``advisor check --profile CLASS_PROFILE --json`` once (``-S advisor=PATH``: the
  program on the partition; ``-S check_options=--quick-s,10``: more words for it).
  Sanity: one JSON report, no differing class fact (a node of another class is a sanity
  failure naming the facts), exit status 0 (healthy) or 1 (drifted), at least one figure
  measured, and a drift that is no figure (a failed measurement) is a sanity failure with
  check's reasons.  Performance: one variable per figure check measured, against its
  reference; a figure outside its band is ReFrame's performance failure.  A figure check has
  no short measurement for (it names it on stderr) gets no variable.

Rounding (the reference is for people to read and compare, not a measurement): ``value`` is the
class median to ``DIGITS`` (3) significant digits (``advisor.specs.units.DIGITS``: the smallest
A/A noise floor the shipped profile records is about 0.8 %, so a fourth digit is noise), in
scientific notation; ``lower``/``upper`` are the band's ends relative to that rounded value,
rounded *outward* to whole percent (``advisor.formats.reframe.STEP``), so the written band
always holds the class band and is at most one percent of the value wider on each side.  The
class band is at least ±k % of the median (MAD held at least the MAD floor, ``MAD_FLOOR_REL`` =
1 % of it by default; k = 6 by default): a percent step is small beside it, and the test never fails a node inside
the band the fleet report keeps.  ``lower`` is held at -1 (ReFrame refuses a lower threshold
below -1 for a positive reference).  Only the worse side is bounded, as ``advisor check``
judges (``advisor.fleet.check``): a rate (``*_per_s``) has no upper threshold, a time (``*_s``)
no lower one, so a node faster than its class passes.  A figure without a band (fewer than ``MIN_NODES`` nodes
had it) or with a median <= 0 is listed as left out.

Every string from the profile (path, figure names, units, class id) is written as a Python
literal (``repr``) or a one-line comment, never as code; ReFrame writes the command line into
the job script unquoted, so the test quotes each word with ``shlex.quote`` itself.  ReFrame's
variable names are the figure names with every character outside ``[A-Za-z0-9_]`` as ``_``
(:func:`advisor.formats.reframe.variable_name`).  Write-only (no ``parse``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

from advisor.errors import EmitError
from advisor.formats import has_line
from advisor.formats.quoting import python_quote
from advisor.formats.reframe import round_sig, thresholds, variable_name
from advisor.specs.units import DIGITS
from advisor.specs.writing import header_lines, one_line

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "reframe-test"
DESCRIPTION = ("ReFrame test running 'advisor check' against a class profile's headline bands "
               "(Python, ReFrame >= 4.6)")
EXTENSION = "py"
#: It writes no setting: the test measures, the class profile's bands are its references.
KINDS: tuple[str, ...] = ()
LIBRARIES: tuple[str, ...] = ()
SUFFIXES: tuple[str, ...] = ()
#: The class name of the test (the sniff looks for its line).
TEST_CLASS = "AdvisorCheck"
_CLASS_LINE = f"class {TEST_CLASS}(rfm.RunOnlyRegressionTest):"


def sniff(text: str) -> bool:
    """Whether ``text`` is a test this format wrote (its class line)."""
    return has_line(text, _CLASS_LINE)


def reference_rows(bands: dict[str, Any]) -> tuple[list[tuple], list[str]]:
    """``(rows, left_out)`` of a class profile's bands (figure -> object with ``median``,
    ``low``, ``high``, ``unit``, ``nodes``): rows ``(variable, figure, value, lower, upper,
    unit)`` sorted by variable; left out: one line per figure without a usable band."""
    rows, out, seen = [], [], set()
    for fig in sorted(bands):
        b = bands[fig]
        var = variable_name(fig)
        if b.low is None or b.high is None:
            out.append(f"{fig}: no band (only {b.nodes} node(s) of the class had it)")
        elif not b.median > 0:
            out.append(f"{fig}: median {b.median!r} is not positive")
        elif var in seen:
            out.append(f"{fig}: its ReFrame name {var} is another figure's")
        else:
            seen.add(var)
            value = round_sig(b.median)
            lower, upper = thresholds(value, b.low, b.high)
            # only the worse side fails, as advisor check drains (advisor.fleet.check): no
            # upper bound for a rate, no lower bound for a time (ReFrame: None, unbounded)
            if fig.endswith("_per_s"):
                upper = None
            elif fig.endswith("_s"):
                lower = None
            rows.append((var, fig, value, lower, upper, b.unit))
    return sorted(rows), out


def class_bands(sel: "Selection") -> tuple[Any, dict[str, Any]]:
    """``(fleet record, figure -> band)`` of the selection's class profile.

    :raises EmitError: the profile has no fleet record or no headline band."""
    fleet = getattr(sel.profile, "fleet", None)
    bands = dict(getattr(fleet, "headlines", None) or {})
    if fleet is None or not bands:
        raise EmitError("not a class profile with headline bands: emit -f reframe-test reads "
                        "the DIR/classes/<class>.toml that 'advisor fleet report DIR' writes")
    return fleet, bands


_IMPORTS = """import json
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError
"""

_TEST = '''


@sn.deferrable
def _report(path):
    """The JSON report advisor check printed (raises SanityError when there is none)."""
    try:
        with open(path, encoding="utf-8") as f:
            got = json.load(f)
    except (OSError, ValueError) as exc:
        raise SanityError(f"advisor check printed no JSON report: {exc}") from None
    if not isinstance(got, dict) or not isinstance(got.get("figures"), list):
        raise SanityError("advisor check printed JSON that is not its report")
    return got


@sn.deferrable
def _sane(path, exitcode):
    """advisor check ran (exit 0 healthy, 1 drifted), this node is of the class, and what
    drifted (if anything) is a figure, which the performance stage reports."""
    got = _report(path).evaluate()
    facts = [str(f.get("fact")) for f in got.get("facts") or [] if isinstance(f, dict)]
    if facts:
        raise SanityError("this node is not of the class; differing facts: " + ", ".join(facts))
    if exitcode not in (0, 1):
        raise SanityError(f"advisor check exited with {exitcode} (2: bad input)")
    rows = [r for r in got["figures"] if isinstance(r, dict)]
    reasons = "; ".join(map(str, got.get("reasons") or []))
    if not any(r.get("figure") in _MEASURED for r in rows):
        raise SanityError("advisor check measured none of " + ", ".join(sorted(_MEASURED))
                          + (f": {reasons}" if reasons else ""))
    if exitcode == 1 and all(r.get("ok") for r in rows):
        raise SanityError(f"advisor check: {reasons}")
    return True


@sn.deferrable
def _figure(path, figure):
    for row in _report(path).evaluate()["figures"]:
        if isinstance(row, dict) and row.get("figure") == figure:
            return float(row["value"])
    raise SanityError(f"advisor check measured no {figure}")


def _measured_here(path):
    """The FIGURES variables whose figure advisor check measured (a figure it has no short
    measurement for is named on its stderr and has no performance variable)."""
    try:
        got = _report(path).evaluate()
    except SanityError:
        return {}
    have = {r.get("figure") for r in got["figures"] if isinstance(r, dict)}
    return {var: row for var, row in FIGURES.items() if row[0] in have}


_MEASURED = {row[0] for row in FIGURES.values()}


@rfm.simple_test
''' + _CLASS_LINE + '''
    """This node's headline figures, measured by advisor check, against its class's bands."""

    descr = "advisor check: headline figures within the machine class's band"
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    num_tasks = 1
    tags = {"advisor", "health"}
    #: the advisor program on the partition (one path, quoted into the job script)
    advisor = variable(str, value="advisor")
    #: the class profile as the partition sees it
    class_profile = variable(str, value=CLASS_PROFILE)
    #: more words for advisor check (e.g. ["--quick-s", "2"]), each quoted
    check_options = variable(typ.List[str], value=[])
    reference = {"*": {var: (value, lower, upper, unit)
                       for var, (_fig, value, lower, upper, unit) in FIGURES.items()}}

    @run_after("init")
    def set_command(self):
        self.executable = shlex.quote(self.advisor)
        words = ["check", "--profile", self.class_profile, "--json", *self.check_options]
        self.executable_opts = [shlex.quote(w) for w in words]

    @sanity_function
    def validate(self):
        return _sane(self.stdout, self.job.exitcode)

    @run_before("performance")
    def set_perf_variables(self):
        stdout = os.path.join(self.stagedir, self.stdout.evaluate())
        self.perf_variables = {
            var: sn.make_performance_function(_figure(self.stdout, fig), unit)
            for var, (fig, _value, _lower, _upper, unit) in _measured_here(stdout).items()}
'''


def render(sel: "Selection") -> str:
    """The test file (module docstring).

    :raises EmitError: not a class profile with headline bands; no band usable."""
    fleet, bands = class_bands(sel)
    rows, left = reference_rows(bands)
    if not rows:
        raise EmitError("no headline figure of the class has a band (" + "; ".join(left) + ")")
    source = getattr(sel, "source", None)
    path: Optional[str] = os.path.abspath(source) if source else None
    k = getattr(fleet, "k", None)
    lines = [f"# {line}" for line in header_lines(sel.profile)]
    lines += [f"# Class {one_line(str(getattr(fleet, 'class_id', '')))}: "
              f"{getattr(fleet, 'nodes', '?')} node(s), band median -/+ {k}*MAD per figure.",
              "# Run: reframe -C SITE_CONFIG -c THIS_FILE -r [-S advisor=PATH] "
              "[-S class_profile=PATH]"]
    lines += [f"# left out: {one_line(why)}" for why in left]
    lines += ["", '"""ReFrame test: advisor check on this node against its machine class '
              '(written by advisor emit -f reframe-test)."""', "", _IMPORTS,
              "#: the class profile advisor check compares the node with"
              + ("" if path else " (emit had no path: set -S class_profile=PATH)"),
              f"CLASS_PROFILE = {python_quote(path or '')}",
              "#: ReFrame variable -> (figure, value, lower, upper, unit): value is the class "
              f"median to {DIGITS} significant digits,",
              "#: lower/upper the class band relative to it, rounded outward to whole percent",
              "FIGURES = {"]
    for var, fig, value, lower, upper, unit in rows:
        b = bands[fig]
        lines.append(f"    # band [{b.low:.6g}, {b.high:.6g}] {one_line(unit)}, median "
                     f"{b.median:.6g} of {b.nodes} node(s)")
        # scientific notation with DIGITS significant digits: the same float as ``value``
        lines.append(f"    {python_quote(var)}: ({python_quote(fig)}, {value:.{DIGITS - 1}e}, "
                     f"{lower!r}, {upper!r}, {python_quote(unit)}),")
    lines.append("}")
    return "\n".join(lines) + _TEST
