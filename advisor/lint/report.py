"""Findings with their location, and how ``advisor lint`` prints them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from advisor.models import Finding

@dataclass(frozen=True)
class LintFinding:
    """A ``Finding`` with where it was found (the schema's ``Finding`` has no location)."""

    finding: Finding
    path: Optional[str] = None
    line: Optional[int] = None
    name: Optional[str] = None

    @property
    def severity(self) -> str:
        return self.finding.severity

    @property
    def location(self) -> str:
        """``path:line`` (files), ``<environment>:NAME`` (live environment) or ``-``."""
        if self.path is None:
            return "-"
        if self.line is None:
            return f"{self.path}:{self.name}" if self.name else self.path
        return f"{self.path}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "line": self.line, "name": self.name}
        d.update(self.finding.model_dump(mode="json", exclude_none=True))
        return d





def has_errors(findings: Iterable[LintFinding]) -> bool:
    """True when a finding has severity ``error`` (``advisor lint`` then exits 1)."""
    return any(f.severity == "error" for f in findings)


def format_text(findings: Sequence[LintFinding]) -> str:
    """Compiler-style lines: ``path:line: severity: message [id]`` and an indented remedy."""
    lines = []
    for f in findings:
        lines.append(f"{f.location}: {f.severity}: {f.finding.message} [{f.finding.id}]")
        if f.finding.remedy:
            lines.append(f"    remedy: {f.finding.remedy}")
    return "".join(line + "\n" for line in lines)


def format_json(findings: Sequence[LintFinding]) -> str:
    """JSON array of findings (path, line, name, id, severity, message, remedy)."""
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"
