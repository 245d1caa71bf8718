"""The session budget: optimizer steps and tokens the server may still spend.

What was spent is kept in the ledger (`ledger.py`) beside the backend's data, so a restarted
server starts from what is left, not from a fresh budget; a "session" is everything trained on
that data (or, with `ledger_file = "memory"`, one server process).

A call reserves its whole plan before it sends anything and settles the reservation as steps
complete; what it did not use goes back when it ends. Reserving is one atomic check-and-hold, so
concurrent calls can never together spend more than the budget (checking first and counting
after the backend answered let two calls each pass a check that only one of them fit).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import TracebackType

from pydantic import BaseModel, Field

from mcp_server.errors import GuardRefusal
from mcp_server.guards import all_of
from mcp_server.ledger import Ledger


class BudgetLeft(BaseModel):
    """What the session may still train; every training result reports it."""

    steps: int = Field(description="Optimizer steps left in this session (kept across restarts).")
    tokens: int = Field(description="Trained tokens left in this session (kept across restarts).")


@dataclass
class Budget:
    max_steps: int
    max_tokens: int
    steps_used: int = 0
    tokens_used: int = 0
    steps_held: int = 0
    tokens_held: int = 0
    ledger: Ledger = field(default_factory=lambda: Ledger(None), repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _synced: bool = field(default=False, repr=False)

    @classmethod
    def from_ledger(cls, max_steps: int, max_tokens: int, ledger: Ledger) -> Budget:
        """A budget that starts from what the ledger says was spent, and records what is."""
        return cls(max_steps, max_tokens, ledger=ledger)

    def _sync(self) -> None:
        """Under the lock, once: add what earlier servers spent (the ledger is read lazily)."""
        if not self._synced:
            spent = self.ledger.load()
            self.steps_used += spent.steps_used
            self.tokens_used += spent.tokens_used
            self._synced = True

    def left(self) -> BudgetLeft:
        """Neither spent nor held by a call in progress."""
        with self._lock:
            self._sync()
            return self._left()

    def _left(self) -> BudgetLeft:
        # Never below 0: a ledger may hold more than a since-lowered maximum.
        return BudgetLeft(
            steps=max(0, self.max_steps - self.steps_used - self.steps_held),
            tokens=max(0, self.max_tokens - self.tokens_used - self.tokens_held),
        )

    def reserve(self, steps: int, tokens: int) -> Reservation:
        """Hold a call's whole plan, or refuse it before anything is sent."""
        with self._lock:
            self._sync()
            left = self._left()

            def enough_steps() -> None:
                if steps > left.steps:
                    raise GuardRefusal(
                        f"this call needs {steps} optimizer steps but the session has "
                        f"{left.steps} left",
                        "max_session_steps",
                        self.max_steps,
                    )

            def enough_tokens() -> None:
                if tokens > left.tokens:
                    raise GuardRefusal(
                        f"this call trains {tokens} tokens but the session has {left.tokens} left",
                        "max_session_tokens",
                        self.max_tokens,
                    )

            all_of(enough_steps, enough_tokens)
            self.steps_held += steps
            self.tokens_held += tokens
        return Reservation(self, steps, tokens)

    def _settle(
        self, held_steps: int, held_tokens: int, spent_steps: int, spent_tokens: int
    ) -> None:
        with self._lock:
            self._sync()
            self.steps_held -= held_steps
            self.tokens_held -= held_tokens
            self.steps_used += spent_steps
            self.tokens_used += spent_tokens
            # Written before the lock is let go (a killed process loses none of it); fsynced
            # when the call ends (its reservation is released), else every ledger.FLUSH_S s.
            self.ledger.add_spend(spent_steps, spent_tokens)


@dataclass
class Reservation:
    """A held part of the budget: `spend` turns some of it into use, `release` returns the rest."""

    budget: Budget
    steps: int
    tokens: int

    def spend(self, steps: int, tokens: int) -> None:
        steps, tokens = min(steps, self.steps), min(tokens, self.tokens)
        self.steps -= steps
        self.tokens -= tokens
        self.budget._settle(steps, tokens, steps, tokens)

    def release(self) -> None:
        self.budget._settle(self.steps, self.tokens, 0, 0)
        self.steps = self.tokens = 0
        self.budget.ledger.flush()  # the call is over: what it spent is on disk

    def __enter__(self) -> Reservation:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
