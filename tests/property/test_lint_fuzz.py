"""Property: ``advisor lint`` never crashes on arbitrary text.  Parsing (every input format) and
checking raise nothing but BadInputError (one clear line), whatever the file holds; findings are
printable as text and JSON.  Inputs mix random text with the fragments env files are made of, so
the parsers' interesting paths (quotes, expansions, continuations, list merges) are reached."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.errors import BadInputError
from advisor.models import Facts
from support import BUILTIN_LIBRARIES

lint = pytest.importorskip("advisor.lint", reason="advisor lint not written yet")

#: Examples per property: sized so this file runs in well under 20 s here.
EXAMPLES = 1000
FORMATS = ["auto", "sh", "csh", "fish", "tcl", "lmod", "spack", "easybuild", "json", "toml"]
#: Per-example time bounds (Hypothesis ``deadline``, not a timed assertion).  An example is at
#: most a few hundred characters, which every reader takes in milliseconds (issue 28: reading
#: is linear in the size); the bounds are far above that so that a loaded shared machine does
#: not trip them, and only a reader whose time explodes on some text (re-reading after an open
#: quote, a regular expression that backtracks) does.  The whole-lint bound also covers the
#: checks and the probes' own lint calls.
PARSE_DEADLINE = timedelta(seconds=1)
LINT_DEADLINE = timedelta(seconds=5)

FRAGMENTS = st.sampled_from([
    "export ", "setenv ", "set -gx ", "set -x ", "unset ", "append-path ", "prepend-path ",
    'setenv("', 'append_path("', "pushenv(", ")", '", "', "MPIR_CVAR_CH4_CMA_ENABLE",
    "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "MPICH_SMP_SINGLE_COPY_MODE", "GLIBC_TUNABLES",
    "glibc.malloc.hugetlb", "DLAF_UMPIRE_DEVICE_MEMORY_POOL_ALIGNMENT_BYTES", "OMPI_MCA_",
    "CUPY_GPU_MEMORY_LIMIT", "=", "==", ":", ";", "'", '"', "\\", "\\\n", "$", "${", "}", "$(",
    "`", "#", "\n", "\r\n", "\t", " ", "8192", "8KiB", "-1", "1e9", "90%", "yes", "{", "[",
    "]", '{"settings": [', '"name": ', '"value": ', "[[settings]]", "name = ", "value = ",
    "if [ -n \"$", " ]; then", "fi", "end", "&&", "||", "\x00", "\u202e", "\ufeff",
    "env_vars:\n", "spack:\n  ", "  set:\n", "    ", "  append_path:\n", "- ", "&a ", "*a",
    "!!python/object ", "modextravars = {", "'value': ", "}", "__import__('os')", "lambda: 0",
])
TEXTS = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=4)), max_size=40).map("".join),
)


@pytest.fixture(scope="module")
def context():
    from advisor.plugins import collect, make_plugin_manager

    reg = collect(make_plugin_manager())
    facts = Facts(mpi={"implementation": "mpich", "flavour": "upstream", "version": "5.0.2"})
    return {"facts": facts, "knobs": reg.knobs, "libraries": BUILTIN_LIBRARIES,
            "catalogues": lint.installed_catalogues(facts, libraries=BUILTIN_LIBRARIES),
            "probes": reg.probes}


@pytest.fixture(scope="module")
def readers():
    """Every format lint reads (built-in and plugin ones), its Tcl interpreter started (the
    first ``tkinter.Tcl()`` alone takes longer than a deadline)."""
    from advisor.formats.shellread import _tcl
    from advisor.plugins import collect, make_plugin_manager

    _tcl()
    from advisor.lint.read import parsers

    return parsers(collect(make_plugin_manager()).emitters)


@settings(max_examples=EXAMPLES, deadline=PARSE_DEADLINE,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=TEXTS, data=st.data())
def test_every_format_parse_is_bounded(readers, text, data):
    """Each readable format's own ``parse`` (built-in and plugin formats) on arbitrary text:
    entries or one clear BadInputError, within the per-example deadline."""
    from advisor.specs.entry import EnvEntry

    fmt = data.draw(st.sampled_from(sorted(readers)))
    parse, _plugin = readers[fmt]
    try:
        entries = parse(text, "fuzz.env")
    except BadInputError as exc:
        assert "\n" not in str(exc), str(exc)
        return
    assert all(isinstance(e, EnvEntry) for e in entries)


@settings(max_examples=EXAMPLES, deadline=LINT_DEADLINE,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=TEXTS, fmt=st.sampled_from(FORMATS))
def test_lint_never_crashes_on_arbitrary_text(context, text, fmt):
    try:
        entries = lint.parse_env_text(text, path="fuzz.env", fmt=fmt)
    except BadInputError as exc:
        msg = str(exc)
        assert msg.startswith("fuzz.env") or msg.startswith("--format"), msg
        return
    findings = lint.lint_entries(entries, **context)
    lint.format_text(findings)
    json.loads(lint.format_json(findings))
    for f in findings:
        assert f.severity in ("info", "warning", "error")


@settings(max_examples=EXAMPLES, deadline=LINT_DEADLINE,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.one_of(st.binary(max_size=500),
                      TEXTS.map(lambda t: t.encode("utf-8", errors="surrogatepass"))),
       suffix=st.sampled_from([".env", ".sh", ".csh", ".fish", ".lua", ".tcl", ".json", ".toml",
                               ".yaml", ".eb", ""]))
def test_lint_file_of_arbitrary_bytes(context, tmp_path_factory, blob, suffix):
    """A file of any bytes, any name: read and checked, or refused in one line naming it."""
    path = tmp_path_factory.mktemp("lint") / f"site{suffix}"
    path.write_bytes(blob)
    try:
        entries = lint.read_env_file(path)
    except BadInputError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc), str(exc)
        return
    lint.lint_entries(entries, **context)
    assert path.read_bytes() == blob
