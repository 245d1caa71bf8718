"""The check API: a `Check` watches observations and tallies what it finds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from trio_local.checks.context import CheckContext
    from trio_local.checks.observations import SampleCall, TrainerEvent


@dataclass
class RunTally:
    count: int = 0
    example: dict[str, Any] | None = None


@dataclass
class Tally:
    """How often a mistake was seen in each run, with the first example per run."""

    runs: dict[str, RunTally] = field(default_factory=dict)

    def add(self, run_id: str, example: dict[str, Any], count: int = 1) -> None:
        entry = self.runs.setdefault(run_id, RunTally())
        entry.count += count
        if entry.example is None:
            entry.example = example

    def merged(self, other: Tally) -> Tally:
        out = Tally({run: RunTally(e.count, e.example) for run, e in self.runs.items()})
        for run, entry in other.runs.items():
            if entry.example is not None:
                out.add(run, entry.example, entry.count)
        return out


class Check:
    """One data mistake. Subclasses set the metadata and override the hooks they need.

    `unit` names what `count` counts (data, events, runs...). `rule` is a trio-lint rule *name*
    (resolved to its code through trio-lint's registry when the report is built) or None.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    fix: ClassVar[str]
    unit: ClassVar[str] = "data"
    rule: ClassVar[str | None] = None

    def __init__(self) -> None:
        self.tally = Tally()

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        """Called for every trainer event, in execution order."""

    def on_sample(self, call: SampleCall, ctx: CheckContext) -> None:
        """Called for every sample request, in execution order."""

    def summary(self, ctx: CheckContext) -> Tally:
        """The tally to report; checks that judge at the end (a whole run) override this."""
        return self.tally
