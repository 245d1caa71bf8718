"""The check report: pydantic models, the text table, and the atomic JSON file."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

REPORT_VERSION = 1


@cache
def rule_code(rule_name: str | None) -> str | None:
    """The code trio-lint's registry gives the rule `rule_name` (None if it has none)."""
    if rule_name is None:
        return None
    from trio_lint.rules import get_rule

    rule = get_rule(rule_name)
    return rule.code if rule is not None else None


class Finding(BaseModel):
    check: str
    rule: str | None = Field(description="the trio-lint rule code for the same mistake in code")
    title: str
    count: int
    unit: str
    runs: list[str]
    example: dict[str, Any] | None
    fix: str


class Observed(BaseModel):
    events: int = 0
    samples: int = 0
    data: int = 0
    checker_cpu_s: float = Field(default=0.0, description="CPU time the checker thread spent, in s")


class CheckReport(BaseModel):
    version: int = REPORT_VERSION
    observed: Observed = Field(default_factory=Observed)
    findings: list[Finding] = Field(default_factory=list)
    dropped: int = Field(
        default=0, description="observations skipped because the checker fell behind"
    )
    check_errors: dict[str, int] = Field(
        default_factory=dict, description="checks that raised (logged and skipped), by name"
    )

    def for_run(self, run_id: str) -> list[Finding]:
        return [finding for finding in self.findings if run_id in finding.runs]

    def render(self) -> str:
        seen = self.observed
        head = (
            f"trio-local check: {seen.events} trainer events ({seen.data} data) and "
            f"{seen.samples} sample requests checked ({seen.checker_cpu_s:.2f} s of checker CPU)"
        )
        lines = [head]
        if not self.findings:
            lines.append("  no data mistakes found")
        for finding in self.findings:
            code = finding.rule or "-"
            lines.append(
                f"  {code:<7} {finding.check}: {finding.title} ({finding.count} {finding.unit})"
            )
            if finding.example is not None:
                lines.append(f"          example: {json.dumps(finding.example)}")
            lines.append(f"          fix: {finding.fix}")
        if self.dropped:
            lines.append(f"  {self.dropped} observations skipped (the checker fell behind)")
        for name, errors in self.check_errors.items():
            lines.append(f"  check {name} failed {errors} times and was skipped (see the log)")
        return "\n".join(lines)

    def write(self, path: Path) -> None:
        from localfs.atomic import write_atomic

        text = self.model_dump_json(indent=2) + "\n"
        write_atomic(path, text.encode("utf-8"), mode=0o644, durable=True, parents=True)
