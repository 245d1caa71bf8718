"""The session budget: optimizer steps and tokens this server process may still spend."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from mcp_server.errors import GuardRefusal


class BudgetLeft(BaseModel):
    """What the session may still train; every training result reports it."""

    steps: int = Field(description="Optimizer steps left in this server session.")
    tokens: int = Field(description="Trained tokens left in this server session.")


@dataclass
class Budget:
    max_steps: int
    max_tokens: int
    steps_used: int = 0
    tokens_used: int = 0

    def left(self) -> BudgetLeft:
        return BudgetLeft(
            steps=self.max_steps - self.steps_used, tokens=self.max_tokens - self.tokens_used
        )

    def check(self, steps: int, tokens: int) -> None:
        """Refuse a call whose whole plan would not fit, before anything is sent."""
        left = self.left()
        if steps > left.steps:
            raise GuardRefusal(
                f"this call needs {steps} optimizer steps but the session has {left.steps} left",
                "max_session_steps",
                self.max_steps,
            )
        if tokens > left.tokens:
            raise GuardRefusal(
                f"this call trains {tokens} tokens but the session has {left.tokens} left",
                "max_session_tokens",
                self.max_tokens,
            )

    def spend(self, steps: int, tokens: int) -> None:
        self.steps_used += steps
        self.tokens_used += tokens
