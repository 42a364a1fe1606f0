"""``sh`` is an alias of the ``env`` format: same bytes from emit, same reader for lint."""

from __future__ import annotations

from advisor import lint
from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.plugins import collect, make_plugin_manager
from support import sample_profile


def test_emit_sh_is_env_and_lint_reads_both_names():
    registry = collect(make_plugin_manager(entry_points=False))
    assert registry.emitters["sh"].render is registry.emitters["env"].render
    assert registry.emitters["sh"].description == "alias of env"
    prof = sample_profile()
    text = render(prof, "sh", registry, EmitOptions())
    assert text == render(prof, "env", registry, EmitOptions())
    for fmt in ("sh", "env"):
        got = lint.parse_env_text(text, path="x", fmt=fmt, emitters=registry.emitters)
        assert [(e.name, e.value) for e in got] == [("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
                                                     "8192")]
        assert [(e.name, e.value) for e in lint.parse_env_text(text, fmt=fmt)] == \
            [(e.name, e.value) for e in got]  # the built-in fallback, without a registry
