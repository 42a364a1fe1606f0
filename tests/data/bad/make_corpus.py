"""Regenerate the bad-input corpus: ``python tests/data/bad/make_corpus.py``.

Writes ``profiles/`` (inputs for ``advisor show`` / ``advisor emit``), ``env/`` (inputs for
``advisor lint``) and ``expected.toml``: per file, why it is bad, the exit code the CLI must give
and the words its one error line must contain (besides the file's path).  Files are derived from a
minimal valid profile (``base.toml``, kept as a control that must load), so schema additions of
optional fields do not change what each file tests.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import tomli_w

HERE = Path(__file__).resolve().parent

BASE = '''schema_version = 1
fingerprint = "0123456789abcdef"

[provenance]
advisor_version = "0.1.0"
command = "advisor probe"
created = "2026-11-30T00:00:00+00:00"
hostname = "node001"

[facts]
hostname = "node001"

[facts.security]
ptrace_scope = 0

[facts.cpu]
cores_logical = 2

[[results]]
plugin = "corpus"
probe = "corpus"
status = "ok"
duration_s = 1.0

[[results.findings]]
id = "demo"
severity = "info"
message = "demo"

[[results.recommendations]]
id = "demo-rec"
title = "demo"
rationale = "demo"
confidence = "low"

[[results.recommendations.settings]]
library = "mpich"
name = "MPIR_CVAR_CH4_CMA_ENABLE"
value = 1

[[results.evidence]]
id = "demo-ev"

[[results.evidence.series]]
name = "bw"
unit = "bytes/s"

[[results.evidence.series.points]]
samples = [1.0, 2.0]

[results.evidence.series.points.stats]
n = 2
median = 1.5
mean = 1.5
p5 = 1.0
p95 = 2.0
min = 1.0
max = 2.0
'''

SETTING = ("results", 0, "recommendations", 0, "settings", 0)
STATS = ("results", 0, "evidence", 0, "series", 0, "points", 0, "stats")


def _mut(path: tuple, value=None, *, delete: bool = False, rename: str | None = None) -> bytes:
    data = tomllib.loads(BASE)
    node = data
    for k in path[:-1]:
        node = node[k]
    last = path[-1]
    if delete:
        del node[last]
    elif rename is not None:
        node[rename] = node.pop(last)
    else:
        node[last] = value
    return tomli_w.dumps(data).encode()


#: A declared knob of type str (memory-pool's CuPy limit): hostile values go through the whole
#: emit path to the shells on a name emit writes, not one a knob's type rules out first.
STR_KNOB = ("cupy", "CUPY_GPU_MEMORY_LIMIT")


def _str_value(value) -> bytes:
    data = tomllib.loads(BASE)
    node = data["results"][0]["recommendations"][0]["settings"][0]
    node["library"], node["name"] = STR_KNOB
    node["value"] = value
    return tomli_w.dumps(data).encode()


def _text(old: str, new: str) -> bytes:
    assert old in BASE, old
    return BASE.replace(old, new, 1).encode()


def _nest(depth: int) -> bytes:
    return (BASE + "deep = " + "[" * depth + "]" * depth + "\n").encode()


# name -> (content, exit code, words the error line contains, why)
PROFILES = {
    # ---- malformed TOML
    "unterminated-table.toml": (_text("[provenance]", "[provenance"), 2, ["malformed TOML"],
                                "table header without its closing bracket"),
    "unterminated-string.toml": (_text('command = "advisor probe"', 'command = "advisor probe'),
                                 2, ["malformed TOML"], "string without its closing quote"),
    "duplicate-key.toml": (_text('fingerprint = "0123456789abcdef"',
                                 'fingerprint = "0123456789abcdef"\nfingerprint = "0"'),
                           2, ["malformed TOML"], "a key assigned twice"),
    "duplicate-table.toml": (BASE.encode() + b"\n[provenance]\ncommand = 'x'\n", 2,
                             ["malformed TOML"], "a table defined twice"),
    "bad-escape.toml": (_text('message = "demo"', 'message = "de\\qmo"'), 2, ["malformed TOML"],
                        "invalid escape sequence in a basic string"),
    "bare-value.toml": (_text('status = "ok"', "status = ok"), 2, ["malformed TOML"],
                        "unquoted string value"),
    "deep-nesting.toml": (_nest(5000), 2, ["nests more than 100 levels deep"],
                          "arrays nested 5000 deep (refused before parsing: "
                          "advisor.nesting.MAX_DEPTH)"),
    "json-document.toml": (b'{"schema_version": 1, "fingerprint": "0123456789abcdef"}\n', 2,
                           ["malformed TOML"], "a JSON document, not TOML"),
    "yaml-document.toml": (b"schema_version: 1\nprovenance:\n  command: advisor probe\n", 2,
                           ["malformed TOML"], "a YAML document, not TOML"),
    "byte-order-mark.toml": (b"\xef\xbb\xbf" + BASE.encode(), 2, ["malformed TOML"],
                             "UTF-8 byte-order mark (TOML forbids it)"),
    "truncated.toml": (BASE.encode()[: len(BASE) * 2 // 3].rsplit(b"=", 1)[0] + b"= ", 2,
                       ["malformed TOML"], "file cut off in the middle of an assignment"),
    # ---- not text
    "empty.toml": (b"", 2, ["empty file"], "zero bytes"),
    "binary-elf.toml": (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, 2, ["not UTF-8"],
                        "an executable's bytes"),
    "invalid-utf8.toml": (BASE.encode().replace(b'hostname = "node001"',
                                                b'hostname = "node\xff\xfe001"', 1),
                          2, ["not UTF-8"], "bytes that are not UTF-8 inside a string"),
    "utf16.toml": (BASE.encode("utf-16"), 2, ["not UTF-8"], "the profile saved as UTF-16"),
    "nul-bytes.toml": (BASE.encode().replace(b"\n[facts]", b"\n\x00\x00[facts]", 1), 2,
                       ["NUL"], "NUL bytes in otherwise valid text"),
    "only-comments.toml": (b"# nothing here\n# at all\n", 2, ["schema_version", "missing"],
                           "valid TOML with no keys"),
    # ---- unknown keys
    "unknown-top-key.toml": (_mut(("colour",), "red"), 2, ["colour", "unknown key"],
                             "a key the schema does not have"),
    "unknown-facts-key.toml": (_mut(("facts", "cpu", "flux_capacitor"), True), 2,
                               ["facts.cpu.flux_capacitor", "unknown key"], "nested unknown key"),
    "unknown-result-key.toml": (_mut(("results", 0, "bogus"), 1), 2,
                                ["results.0.bogus", "unknown key"], "unknown key in a result"),
    "unknown-setting-key.toml": (_mut(SETTING + ("colour",), "red"), 2,
                                 ["results.0.recommendations.0.settings.0.colour", "unknown key"],
                                 "unknown key in a setting"),
    "misspelt-key.toml": (_mut(("fingerprint",), rename="fingerprnt"), 2,
                          ["fingerprnt", "unknown key", "did you mean 'fingerprint'"],
                          "a misspelt required key (reported as unknown)"),
    # ---- wrong types
    "fingerprint-int.toml": (_mut(("fingerprint",), 42), 2, ["fingerprint"], "int for a string"),
    "results-not-array.toml": (_mut(("results",), "none"), 2, ["results"], "string for a list"),
    "facts-not-table.toml": (_mut(("facts",), 3), 2, ["facts"], "int for a table"),
    "setting-value-table.toml": (_mut(SETTING + ("value",), {"a": 1}), 2,
                                 ["key 'results.0.recommendations.0.settings.0.value'", "bool, int, float, str"],
                                 "a table where a scalar setting value belongs"),
    "setting-value-array.toml": (_mut(SETTING + ("value",), [1, 2]), 2,
                                 ["key 'results.0.recommendations.0.settings.0.value'", "bool, int, float, str"],
                                 "an array where a scalar setting value belongs"),
    "stats-n-string.toml": (_mut(STATS + ("n",), "two"), 2,
                            ["results.0.evidence.0.series.0.points.0.stats.n"], "string for int"),
    "sample-string.toml": (_mut(("results", 0, "evidence", 0, "series", 0, "points", 0,
                                 "samples"), [1.0, "fast"]), 2,
                           ["results.0.evidence.0.series.0.points.0.samples.1"],
                           "a string among float samples"),
    "created-datetime.toml": (_text('created = "2026-11-30T00:00:00+00:00"',
                                    "created = 2026-11-30T00:00:00+00:00"), 2,
                              ["provenance.created"], "a TOML datetime where a string belongs"),
    "status-unknown.toml": (_mut(("results", 0, "status"), "great"), 2, ["results.0.status"],
                            "a status outside ok / not-applicable / failed"),
    "severity-unknown.toml": (_mut(("results", 0, "findings", 0, "severity"), "fatal"), 2,
                              ["results.0.findings.0.severity"], "unknown finding severity"),
    "missing-provenance.toml": (_mut(("provenance",), delete=True), 2, ["provenance", "missing"],
                                "a required table left out"),
    # ---- out of range
    "ptrace-scope-7.toml": (_mut(("facts", "security", "ptrace_scope"), 7), 2,
                            ["facts.security.ptrace_scope"], "Yama ptrace_scope is 0..3"),
    "negative-duration.toml": (_mut(("results", 0, "duration_s"), -1.0), 2,
                               ["results.0.duration_s"], "negative seconds"),
    "negative-cores.toml": (_mut(("facts", "cpu", "cores_logical"), -4), 2,
                            ["facts.cpu.cores_logical"], "negative core count"),
    "ci-level-2.toml": (_mut(STATS + ("ci_level",), 2.0), 2,
                        ["results.0.evidence.0.series.0.points.0.stats.ci_level"],
                        "a confidence level outside (0, 1)"),
    "fingerprint-short.toml": (_mut(("fingerprint",), "abc"), 2, ["fingerprint"],
                               "fingerprint not 16 hex digits"),
    "huge-int.toml": (_mut(("facts", "security", "ptrace_scope"), 2 ** 70), 2,
                      ["facts.security.ptrace_scope"], "an integer beyond 64 bits"),
    # ---- schema version
    "schema-newer.toml": (_mut(("schema_version",), 2), 2, ["needs schema 2", "upgrade"],
                          "a profile from a newer hpc-advisor"),
    "schema-far-future.toml": (_mut(("schema_version",), 99999), 2, ["needs schema 99999"],
                               "a far newer schema"),
    "schema-zero.toml": (_mut(("schema_version",), 0), 2, ["schema_version", "0"],
                         "version 0 never existed"),
    "schema-negative.toml": (_mut(("schema_version",), -1), 2, ["schema_version"],
                             "negative version"),
    "schema-string.toml": (_mut(("schema_version",), "1"), 2, ["schema_version", "integer"],
                           "version as a string"),
    "schema-float.toml": (_mut(("schema_version",), 1.5), 2, ["schema_version", "integer"],
                          "version as a float"),
    "schema-bool.toml": (_mut(("schema_version",), True), 2, ["schema_version", "integer"],
                         "version as a boolean"),
    "schema-missing.toml": (_mut(("schema_version",), delete=True), 2,
                            ["schema_version", "missing"], "no version: not a profile"),
    # ---- hostile names and values refused at load (the schema forbids them)
    "evidence-id-traversal.toml": (_mut(("results", 0, "evidence", 0, "id"), "../../etc/passwd"),
                                   2, ["results.0.evidence.0.id"], "path traversal as an id"),
    "finding-id-shell.toml": (_mut(("results", 0, "findings", 0, "id"), "x; rm -rf ~"), 2,
                              ["results.0.findings.0.id"], "shell text as an id"),
    "setting-name-newline.toml": (_mut(SETTING + ("name",), "A\nexport EVIL=1"), 2,
                                  ["results.0.recommendations.0.settings.0.name"],
                                  "a newline in a setting name (would inject a line)"),
    "setting-name-empty.toml": (_mut(SETTING + ("name",), ""), 2,
                                ["results.0.recommendations.0.settings.0.name"], "empty name"),
}

# Hostile profiles that load: ``emit`` must refuse them naming the setting (exit 2) -- or, with
# exit 0, write them so that every shell reads back the exact value and runs nothing.
HOSTILE = {
    "name-shell-injection.toml": (_mut(SETTING + ("name",), "X;touch PWNED"), 2,
                                  ["X;touch PWNED"], "shell syntax in a variable name"),
    "name-with-equals.toml": (_mut(SETTING + ("name",), "A=B"), 2, ["A=B"],
                              "'=' in a variable name"),
    "name-leading-digit.toml": (_mut(SETTING + ("name",), "1ABC"), 2, ["1ABC"],
                                "a name sh cannot assign"),
    "value-newline.toml": (_str_value("1\ntouch PWNED"), 2,
                           ["CUPY_GPU_MEMORY_LIMIT", "control character"],
                           "a newline in a value"),
    "value-escape-sequence.toml": (_str_value("\x1b]0;owned\x07"), 2,
                                   ["CUPY_GPU_MEMORY_LIMIT", "control character"],
                                   "a terminal escape sequence in a value"),
    "value-command-substitution.toml": (_str_value("$(touch PWNED)`touch PWNED`"),
                                        0, [], "command substitution in a value"),
    "value-quotes-backslashes.toml": (_str_value("a'b\"c\\d\\'e!f%g"), 0, [],
                                      "every quote and escape character"),
    "value-variable-expansion.toml": (_str_value("${HOME}$HOME~%PATH%"), 0, [],
                                      "variable references that must stay literal"),
    "value-bidi-override.toml": (_str_value("abc\u202edef\u2066"), 0, [],
                                 "Unicode bidi overrides (Trojan Source)"),
    "value-wrong-type.toml": (_mut(SETTING + ("value",), "maybe"), 2,
                              ["MPIR_CVAR_CH4_CMA_ENABLE", "not a boolean"],
                              "a value the declaring knob's type rules out (MPICH aborts on it)"),
    "value-long.toml": (_str_value("x" * 100_000), 0, [], "a 100 kB value"),
    "hostname-newline.toml": (_mut(("provenance", "hostname"), "node\ntouch PWNED"), 0, [],
                              "a newline in the provenance hostname (header comment)"),
    "rationale-newline.toml": (_mut(("results", 0, "recommendations", 0, "rationale"),
                                    "ok\ntouch PWNED\n]]\n}\n--"), 0, [],
                               "newlines and closing brackets in a comment text"),
    "markup-in-messages.toml": (_mut(("results", 0, "findings", 0, "message"),
                                     "[/x] [bold]b[/bold] \x1b[31mred\x1b[0m"), 0, [],
                                "rich markup and ANSI escapes in a message (advisor show)"),
}

# Env files for ``advisor lint``: unreadable ones are refused (exit 2); broken lines are
# findings naming file and line (exit 1) or a refusal (exit 2) -- never silence, never a crash.
ENV = {
    "binary.env": (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), 2, ["not UTF-8"],
                   "an executable's bytes"),
    "invalid-utf8.env": (b"export MPIR_CVAR_CH4_CMA_ENABLE=\xff\xfe\n", 2, ["not UTF-8"],
                         "bytes that are not UTF-8"),
    "nul-bytes.env": (b"export MPIR_CVAR_CH4_CMA_ENABLE=1\x00\n", 2, ["NUL"], "a NUL byte"),
    "utf16.env": ("export MPIR_CVAR_CH4_CMA_ENABLE=1\n".encode("utf-16"), 2, [],
                  "UTF-16 text"),
    "unterminated-quote.env": (b'export MPIR_CVAR_CH4_CMA_ENABLE="1\nexport X=2\n', [1, 2],
                               ["unterminated-quote.env"], "a quote never closed"),
    "bad-names.env": (b"=1\nexport =2\n1ABC=3\nA-B=4\n", [1, 2], ["bad-names.env"],
                      "assignments sh cannot make"),
    "command-substitution.env": (b"export MPIR_CVAR_CH4_CMA_ENABLE=$(touch PWNED)\n", [0, 1],
                                 [], "lint must read, never run, the file"),
    "malformed-json.json": (b'{"MPIR_CVAR_CH4_CMA_ENABLE": 1,,}', 2, ["malformed JSON"],
                            "broken JSON output"),
    "malformed-toml.toml": (b"[settings\nMPIR_CVAR_CH4_CMA_ENABLE = 1\n", 2, ["malformed TOML"],
                            "broken TOML output"),
    "lmod-unbalanced.lua": (b'setenv("MPIR_CVAR_CH4_CMA_ENABLE", "1"\n', [1, 2],
                            ["lmod-unbalanced.lua"], "an Lmod call never closed"),
    "csh-unterminated.csh": (b"setenv MPIR_CVAR_CH4_CMA_ENABLE '1\n", [1, 2],
                             ["csh-unterminated.csh"], "csh quote never closed"),
    "long-line.env": (b"export MPIR_CVAR_CH4_CMA_ENABLE=" + b"9" * 200_000 + b"\n", [1], [
                      "MPIR_CVAR_CH4_CMA_ENABLE"], "a 200 kB value for a boolean CVAR"),
}


def main() -> None:
    manifest: dict = {"profiles": {}, "hostile": {}, "env": {}}
    for folder, table in (("profiles", PROFILES), ("hostile", HOSTILE), ("env", ENV)):
        d = HERE / folder
        d.mkdir(exist_ok=True)
        for old in d.iterdir():
            old.unlink()
        for name, (content, code, words, why) in sorted(table.items()):
            (d / name).write_bytes(content)
            manifest[folder][name] = {"why": why, "exit": code, "expect": words}
    (HERE / "base.toml").write_text(BASE)
    header = ("# Generated by make_corpus.py: per corpus file, why it is bad, the exit code the\n"
              "# CLI must give (a list: any of them) and the words of its one error line.\n")
    (HERE / "expected.toml").write_text(header + tomli_w.dumps(manifest))


if __name__ == "__main__":
    main()
