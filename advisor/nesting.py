"""Depth bounded before parsing: the one guard every reader of user text goes through.

JSON (``json``), TOML (``tomllib``), YAML (PyYAML's composer) and Python (``ast``) parsers
recurse once per level of nesting, and Tcl's parser (``info complete``, native code) once per
``[`` command substitution, with no bound of their own: a deep enough nest ends in
``RecursionError`` (an internal error where nothing catches it) or, in Tcl's C parser, in a
stack overflow that kills the process.  Sizes are bounded where the text is read
(:mod:`advisor.textfile`, ``max_bytes`` of each kind); this module bounds depth, on the text,
before the parser runs:

- :func:`load_json`, :func:`load_toml`: the bracket depth outside strings and comments
  (:func:`nesting_depth`) is at most :data:`MAX_DEPTH`, then the library parses; for TOML the
  parsed tables are measured too (dotted keys and table headers nest without brackets);
- :func:`compose_yaml`: PyYAML's composer, which refuses, as it goes, the level past the
  bound (before it recurses) and aliases past :data:`MAX_ALIAS_NODES` (a "billion laughs");
- :func:`check_tcl`: the ``[`` a text gives Tcl's parser (:data:`MAX_TCL_SUBSTITUTIONS`);
- :func:`parse_python`: ``ast.parse``, whose C parser bounds itself (below), its errors as one
  line.

Every refusal is a :class:`~advisor.errors.BadInputError` (exit 2) naming the source and the
limit.  Errors raised: ``BadInputError`` (or the ``error`` subclass given) only.
"""

from __future__ import annotations

import re
from typing import Any, Type

from advisor.errors import BadInputError

__all__ = ["MAX_DEPTH", "MAX_ALIAS_NODES", "MAX_TCL_SUBSTITUTIONS", "nesting_depth",
           "data_depth", "check_depth", "load_json", "load_toml", "compose_yaml", "check_tcl",
           "parse_python"]

#: Deepest nest of arrays, tables, objects or YAML collections read.  tomlkit's own bound
#: (``MAX_NESTING_DEPTH = 100``, python-poetry/tomlkit#510; BurntSushi/toml and tomlj use 128);
#: 10x the deepest file this project writes or ships (a profile: 10 levels, measured over
#: profiles/, advisor/shipped and tests/data); and below where each parser fails at Python's
#: default recursion limit of 1000 (measured, CPython 3.11: tomllib 330 nested inline tables,
#: PyYAML 492 nested sequences, json 993 nested arrays; less when called from deeper frames).
MAX_DEPTH = 100

#: Most nodes that aliases may add to a YAML document once expanded.  go-yaml v3 (decode.go)
#: lets alias expansion make up at most 400,000 decode operations of a small document ("~100MB
#: of allocations in worst-case scenarios"); a "billion laughs" of 10 levels of 9 aliases adds
#: 10^9.  No Spack environment file needs aliases at all.
MAX_ALIAS_NODES = 400_000

#: Most unescaped ``[`` in one text given to Tcl's parser.  Each nests a command substitution,
#: which Tcl 8.6's parser reads by recursing in C with no bound: measured here (Tcl 8.6.13,
#: 8 MiB stack) a nest of 20,000 parses and one of 30,000 kills Python with SIGSEGV.  1000 is
#: Tcl's own nesting limit for evaluation (``interp recursionlimit``, default 1000; measured:
#: ``set x [list [list ...]]`` 1000 deep fails "too many nested evaluations"), so no modulefile
#: the module command can run nests deeper, and 1000 levels need under 1/20 of that stack.
#: Every ``[`` is counted, nested or not: an upper bound on the nest whatever the quoting
#: (braces, quotes and comments cannot hide one), and a legitimate command holds far fewer.
MAX_TCL_SUBSTITUTIONS = 1000

#: A string, a comment, or a bracket, per syntax; strings and comments hold no structure.
_TOKENS = {
    "json": re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}]'),
    "toml": re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
                       r"|'[^'\n]*'|#[^\n]*|[\[\]{}.=,\n]", re.S),
}


def nesting_depth(text: str, syntax: str) -> int:
    """The deepest bracket nest (``[`` ``{``) of ``text`` outside strings and comments of
    ``syntax`` (``json`` or ``toml``), in levels; linear in ``len(text)``.  A stray closer
    never takes the count below 0, so an unbalanced text is measured by what it opens.  In
    TOML each ``.`` of a dotted key (the dots in a run without ``= , [ ] { }`` or a line end)
    is a level too: ``a.b.c = 1`` nests 3 deep (tomllib reads a long one in quadratic time)."""
    depth = deepest = dots = 0
    for m in _TOKENS[syntax].finditer(text):
        c = m.group()
        if c == ".":
            dots += 1
            deepest = max(deepest, depth + dots + 1)
            continue
        dots = 0
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(0, depth - 1)
    return deepest


def data_depth(data: Any) -> int:
    """The nesting depth of parsed data (dicts and lists; a scalar is 0), without recursion."""
    deepest = 0
    stack = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, depth + 1)
            stack.extend((v, depth + 1) for v in node)
    return deepest


def _too_deep(label: str, what: str, error: Type[BadInputError]) -> BadInputError:
    return error(f"{label}: {what} nests more than {MAX_DEPTH} levels deep; refused before "
                 "parsing (no real file nests this deep)")


def check_depth(text: str, label: str, syntax: str, *,
                error: Type[BadInputError] = BadInputError) -> None:
    """Refuse ``text`` when :func:`nesting_depth` exceeds :data:`MAX_DEPTH`.

    :raises BadInputError: (``error``) one line naming ``label`` and the limit.
    """
    if sum(map(text.count, "[{.")) < MAX_DEPTH:
        return  # fewer openers and dots than levels allowed: no need to scan
    if nesting_depth(text, syntax) > MAX_DEPTH:
        raise _too_deep(label, f"{syntax.upper()} text", error)


def load_json(text: str, label: str, *, error: Type[BadInputError] = BadInputError) -> Any:
    """``json.loads(text)`` after :func:`check_depth`.

    :raises BadInputError: (``error``) too deep, or malformed JSON (json's message).
    """
    import json

    check_depth(text, label, "json", error=error)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise error(f"{label}: malformed JSON: {exc}") from None


def load_toml(text: str, label: str, *, error: Type[BadInputError] = BadInputError) -> dict:
    """``tomllib.loads(text)`` after :func:`check_depth`, its tables measured by
    :func:`data_depth` too.

    :raises BadInputError: (``error``) too deep, or malformed TOML (tomllib's message).
    """
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    check_depth(text, label, "toml", error=error)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{label}: malformed TOML: {exc}") from None
    if data_depth(data) - 1 > MAX_DEPTH:  # the document's own table is no level
        raise _too_deep(label, "TOML text", error)
    return data


def _bounded_loader(label: str, error: Type[BadInputError]) -> type:
    """A ``yaml.SafeLoader`` whose composer (one recursion per level) refuses, as it goes, a
    nest deeper than :data:`MAX_DEPTH` (before the next level recurses) and aliases that add
    more than :data:`MAX_ALIAS_NODES` nodes (each alias counts the nodes of what it names)."""
    import yaml

    class Loader(yaml.SafeLoader):
        depth = 0
        added = 0

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.sizes: dict[int, int] = {}  # id(node) -> nodes in it, itself included

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                named = self.anchors.get(self.peek_event().anchor)
                self.added += self.sizes.get(id(named), 1)
                if self.added > MAX_ALIAS_NODES:
                    raise error(f"{label}: YAML aliases expand to more than {MAX_ALIAS_NODES} "
                                "nodes (a \"billion laughs\"); refused before parsing")
                return super().compose_node(parent, index)
            nested = self.check_event(yaml.CollectionStartEvent)
            self.depth += nested
            if self.depth > MAX_DEPTH:
                raise _too_deep(label, "YAML text", error)
            try:
                node = super().compose_node(parent, index)
            finally:
                self.depth -= nested
            if nested:
                kids = ([c for pair in node.value for c in pair]
                        if isinstance(node, yaml.MappingNode) else node.value)
                self.sizes[id(node)] = 1 + sum(self.sizes.get(id(c), 1) for c in kids)
            return node

    return Loader


def compose_yaml(text: str, label: str, *, error: Type[BadInputError] = BadInputError) -> Any:
    """The node tree of YAML ``text`` (``yaml.compose``, marks kept for line numbers), its depth
    and alias expansion bounded while it composes (module docstring).

    :raises BadInputError: (``error``) too deep, too many aliased nodes, or malformed YAML
        (``label:LINE`` named).
    """
    import yaml

    try:
        return yaml.compose(text, Loader=_bounded_loader(label, error))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark is not None else label
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{where}: malformed YAML: {' '.join(str(what).split())}") from None


_TCL_OPEN = re.compile(r"\\.|\[", re.S)


def check_tcl(text: str, label: str, *, error: Type[BadInputError] = BadInputError) -> None:
    """Refuse ``text`` before Tcl's parser reads it when it holds more than
    :data:`MAX_TCL_SUBSTITUTIONS` unescaped ``[``.

    :raises BadInputError: (``error``) one line naming ``label`` and the limit.
    """
    if text.count("[") <= MAX_TCL_SUBSTITUTIONS:
        return
    opened = sum(1 for m in _TCL_OPEN.finditer(text) if m.group() == "[")
    if opened > MAX_TCL_SUBSTITUTIONS:
        raise error(f"{label}: {opened} Tcl command substitutions ('[') in one command, more "
                    f"than {MAX_TCL_SUBSTITUTIONS}; refused before Tcl's parser reads it "
                    "(it recurses once per nested '[' without a bound)")


def parse_python(text: str, label: str, what: str, *,
                 error: Type[BadInputError] = BadInputError) -> Any:
    """``ast.parse(text)`` (nothing runs).  CPython's parser bounds its own depth: at most 200
    nested brackets (``MAXLEVEL``, Parser/tokenizer.h) and a parser stack of 6000
    (``MAXSTACK``, Parser/parser.c), past which it raises ``SyntaxError`` or
    ``MemoryError``, and ``RecursionError`` while it builds a deeper tree; each is one line.

    :param what: the kind of file, for the message (``easyconfig``).
    :raises BadInputError: (``error``) not Python syntax (the line named), or too deep.
    """
    import ast
    import warnings

    try:
        with warnings.catch_warnings():  # "invalid decimal literal" and the like: the text
            warnings.simplefilter("ignore", SyntaxWarning)  # is data, its warnings not ours
            return ast.parse(text, filename=label)
    except SyntaxError as exc:
        raise error(f"{label}: not Python ({what}) syntax: line {exc.lineno}: "
                    f"{exc.msg}") from None
    except (MemoryError, RecursionError):
        raise error(f"{label}: Python ({what}) nested deeper than CPython's parser reads; "
                    "refused") from None
