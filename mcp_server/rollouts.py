"""Rollouts kept between a `sample` call and the `train_on_rewards` call that scores them.

`sample` stores each completion it returns as a `Rollout` (prompt tokens, completion tokens, the
sampler's logprobs, which run and which weights version sampled it) under a fresh rollout id, so
an agent can reward text and never handle tokens. The store is bounded twice: a rollout lives at
most `ttl_s` seconds, and past `max_rollouts` the oldest are dropped. Forgotten ids are remembered
(boundedly) with why they went, so a refusal can say "expired" or "already used" rather than
"unknown".

`claim` is the one way rollouts leave the store for training. It checks every id and takes them
all, or refuses naming every bad id; there is no await inside, so two concurrent reward calls
naming the same rollout can never both get it. `release` gives claimed rollouts back when the
update was refused before anything reached the backend.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from mcp_server.errors import InvalidInput

ROLLOUT_ID_PATTERN = r"^ro-[0-9a-f]{16}$"

EXPIRED = "expired (rollouts are kept {ttl:g} s; sample again)"
EVICTED = "dropped because the store is full (max_rollouts {limit}); sample again"
USED = "already used by an update (each rollout trains once; sample again)"
UNKNOWN = "unknown (never returned by sample, or sampled before the server restarted)"


@dataclass(frozen=True)
class Rollout:
    """One completion as the sampler produced it: what the policy loss needs to train on it."""

    rollout_id: str
    source: str  # what `sample` was given as `model`: a run id, a checkpoint path or a base model
    run_id: str | None  # the run whose current weights sampled it; None for checkpoints and bases
    prompt_tokens: tuple[int, ...]
    completion_tokens: tuple[int, ...]
    logprobs: tuple[float, ...]  # the sampler's logprob of each completion token
    weights_version: int  # the run's optimizer step when it was sampled
    created: float  # the store's clock (monotonic seconds)


@dataclass
class RolloutStore:
    max_rollouts: int
    ttl_s: float
    clock: Callable[[], float] = time.monotonic
    _live: OrderedDict[str, Rollout] = field(default_factory=OrderedDict)
    _gone: OrderedDict[str, str] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._live)

    def add(
        self,
        *,
        source: str,
        run_id: str | None,
        prompt_tokens: Sequence[int],
        completion_tokens: Sequence[int],
        logprobs: Sequence[float],
        weights_version: int,
    ) -> str:
        """Keep one rollout; return its new id."""
        if len(logprobs) != len(completion_tokens):
            raise ValueError("one logprob per completion token")
        rollout_id = f"ro-{secrets.token_hex(8)}"
        rollout = Rollout(
            rollout_id=rollout_id,
            source=source,
            run_id=run_id,
            prompt_tokens=tuple(prompt_tokens),
            completion_tokens=tuple(completion_tokens),
            logprobs=tuple(float(v) for v in logprobs),
            weights_version=weights_version,
            created=self.clock(),
        )
        with self._lock:
            self._expire()
            self._live[rollout_id] = rollout
            while len(self._live) > self.max_rollouts:
                oldest, _ = self._live.popitem(last=False)
                self._forget(oldest, EVICTED.format(limit=self.max_rollouts))
        return rollout_id

    def claim(self, rollout_ids: Iterable[str], run_id: str) -> list[Rollout]:
        """Take every named rollout for an update of `run_id`, or refuse naming each bad id."""
        ids = list(dict.fromkeys(rollout_ids))
        with self._lock:
            self._expire()
            problems: dict[str, list[str]] = {}
            for rollout_id in ids:
                live = self._live.get(rollout_id)
                if live is None:
                    reason = self._gone.get(rollout_id, UNKNOWN)
                elif live.run_id != run_id:
                    reason = (
                        f"sampled from {live.source!r}, not from run {run_id!r} (a run trains "
                        "only on rollouts sampled from its own current weights)"
                    )
                else:
                    continue
                problems.setdefault(reason, []).append(rollout_id)
            if problems:
                raise InvalidInput(
                    "rewards name rollouts that cannot be used: "
                    + "; ".join(f"{', '.join(bad)}: {why}" for why, bad in problems.items())
                )
            claimed = [self._live.pop(rollout_id) for rollout_id in ids]
            for rollout in claimed:
                self._forget(rollout.rollout_id, USED)
        return claimed

    def release(self, rollouts: Iterable[Rollout]) -> None:
        """Give back rollouts whose update never reached the backend (they stay usable)."""
        with self._lock:
            for rollout in rollouts:
                self._gone.pop(rollout.rollout_id, None)
                self._live[rollout.rollout_id] = rollout
            # Oldest first again: `_expire` stops at the first rollout still in time.
            self._live = OrderedDict(sorted(self._live.items(), key=lambda kv: kv[1].created))
            self._expire()

    def _expire(self) -> None:
        deadline = self.clock() - self.ttl_s
        while self._live:
            rollout_id, oldest = next(iter(self._live.items()))
            if oldest.created > deadline:
                break
            del self._live[rollout_id]
            self._forget(rollout_id, EXPIRED.format(ttl=self.ttl_s))

    def _forget(self, rollout_id: str, reason: str) -> None:
        self._gone[rollout_id] = reason
        self._gone.move_to_end(rollout_id)
        while len(self._gone) > 4 * self.max_rollouts:
            self._gone.popitem(last=False)
