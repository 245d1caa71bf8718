"""sample: generate from a run's current weights, a saved checkpoint, or a base model.

One call takes one prompt (`prompt` or `messages`) or several (`prompts`), and `num_samples`
completions of each. Every completion is kept as a rollout (`mcp_server.rollouts`) and returned
with its id, so `train_on_rewards` can train on rewards the agent gives to text.
"""

from __future__ import annotations

from typing import Any

import anyio
from pydantic import BaseModel, Field, model_validator

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.datums import sample_prompt_tokens
from mcp_server.errors import InvalidInput
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import backend, sdk
from mcp_server.tools._sampling import MODEL, Sampler, open_sampler
from mcp_server.tools.train_sft import ChatMessage

MAX_PROMPTS = 64


class SampleInput(ToolInput):
    model: str = MODEL
    prompt: str | None = Field(
        None,
        min_length=1,
        max_length=100_000,
        description="Raw text prompt (matches {prompt, completion} training).",
    )
    messages: list[ChatMessage] | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="A chat, rendered with the chat template and a generation prompt (matches "
        "{messages} training).",
    )
    prompts: list[str | list[ChatMessage]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_PROMPTS,
        description="Several prompts in one call, each a raw text or a chat (a list of "
        "messages); num_samples completions of each. Use it for RL: sample a group per prompt, "
        "then reward the rollouts with train_on_rewards.",
    )
    max_tokens: int = Field(64, ge=1, le=8192, description="Tokens to generate at most.")
    temperature: float = Field(1.0, ge=0, le=2, description="0 is greedy.")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling mass; 1 disables it.")
    top_k: int = Field(-1, ge=-1, le=1000, description="-1 disables top-k.")
    stop: list[str] | None = Field(None, max_length=8, description="Strings that end generation.")
    num_samples: int = Field(
        1, ge=1, le=64, description="Completions to generate per prompt (a group, for RL)."
    )
    seed: int | None = Field(
        None,
        ge=0,
        le=2**31 - 1,
        description="Seed for reproducible samples (prompt i of `prompts` uses seed + i).",
    )
    return_logprobs: bool = Field(False, description="Include each generated token's logprob.")

    @model_validator(mode="after")
    def _one_prompt(self) -> SampleInput:
        given = [self.prompt, self.messages, self.prompts]
        if sum(value is not None for value in given) != 1:
            raise ValueError("give exactly one of prompt, messages or prompts")
        for index, item in enumerate(self.prompts or []):
            if isinstance(item, str) and not item:
                raise ValueError(f"prompts[{index}] is empty; give some text")
            if isinstance(item, list) and not 1 <= len(item) <= 64:
                raise ValueError(f"prompts[{index}] must be a chat of 1-64 messages")
        if self.stop and any(not s or len(s) > 200 for s in self.stop):
            raise ValueError("each stop string must be 1-200 characters")
        return self


class Completion(BaseModel):
    text: str
    tokens: list[int]
    stop_reason: str
    logprobs: list[float] | None = None
    prompt_index: int = Field(0, description="Which prompt of `prompts` this completes (0 else).")
    rollout_id: str | None = Field(
        description="Give it a reward in train_on_rewards (kept for a limited time, used once); "
        "None when the backend returned no logprobs for it."
    )


class SampleOutput(BackendResult):
    model: str
    model_kind: str = Field(description="'run', 'checkpoint' or 'base_model'.")
    weights_version: int = Field(
        description="The run's optimizer step the sampled weights are from (0 unless a run)."
    )
    samples: list[Completion] = Field(
        description="Every completion, grouped by prompt in order: num_samples per prompt."
    )

    def summary(self) -> str:
        prompts = len({c.prompt_index for c in self.samples})
        first = self.samples[0].text if self.samples else ""
        first = first if len(first) <= 80 else first[:79] + "…"
        return (
            f"sample: {len(self.samples)} completions of {prompts} prompt(s) from "
            f"{self.model_kind} {self.model[:120]} (weights version {self.weights_version}); "
            f"first: {first!r} (full result: structured content)"
        )


def _prompts(args: SampleInput) -> list[str | list[dict[str, str]]]:
    if args.prompts is not None:
        return [
            item if isinstance(item, str) else [m.model_dump() for m in item]
            for item in args.prompts
        ]
    if args.messages is not None:
        return [[m.model_dump() for m in args.messages]]
    return [args.prompt or ""]


def _tokens(
    tokenizer: Any, prompt: str | list[dict[str, str]], index: int, many: bool
) -> list[int]:
    if isinstance(prompt, str):
        tokens = sample_prompt_tokens(tokenizer, prompt, None)
    else:
        tokens = sample_prompt_tokens(tokenizer, None, prompt)
    if not tokens:
        where = f"prompts[{index}]" if many else "the prompt"
        raise InvalidInput(f"{where} tokenizes to nothing; give some text")
    return tokens


async def sample(app: AppState, args: SampleInput, ctx: ToolCall) -> SampleOutput:
    import pytrio as trio

    guards.check_sampling(app.config, args.max_tokens, args.num_samples)
    be = await backend(app)
    sampler = await open_sampler(app, be, args.model)
    prompts = _prompts(args)
    many = args.prompts is not None
    tokens = [_tokens(sampler.tokenizer, p, i, many) for i, p in enumerate(prompts)]
    responses: list[Any] = [None] * len(tokens)

    async def one(index: int) -> None:
        seed = None if args.seed is None else (args.seed + index) % 2**31
        params = trio.SamplingParams(
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            top_p=args.top_p,
            top_k=args.top_k,
            stop=args.stop,
            seed=seed,
        )
        where = f"sampling prompts[{index}]" if many else "sampling"
        responses[index] = await sdk(
            where,
            sampler.client.sample_async(
                prompt=trio.ModelInput.from_ints(tokens[index]),
                num_samples=args.num_samples,
                sampling_params=params,
            ),
        )

    # Every prompt is in flight at once: the backend batches them.
    async with anyio.create_task_group() as group:
        for index in range(len(tokens)):
            group.start_soon(one, index)
    samples = [
        _completion(app, args, sampler, index=index, prompt=tokens[index], seq=sequence)
        for index, response in enumerate(responses)
        for sequence in response.sequences
    ]
    return SampleOutput(
        model=args.model,
        model_kind=sampler.kind,
        weights_version=sampler.version,
        samples=samples,
        **backend_fields(be),
    )


def _completion(
    app: AppState, args: SampleInput, sampler: Sampler, *, index: int, prompt: list[int], seq: Any
) -> Completion:
    completion = list(seq.tokens)
    # The sampler's own logprobs of the sampled tokens: what the policy loss compares against.
    logprobs = [float(v) for v in seq.logprobs] if seq.logprobs else []
    rollout_id = None
    if len(logprobs) == len(completion):  # without them there is nothing to train against
        rollout_id = app.rollouts.add(
            source=args.model,
            run_id=sampler.run.run_id if sampler.run is not None else None,
            prompt_tokens=prompt,
            completion_tokens=completion,
            logprobs=logprobs,
            weights_version=sampler.version,
        )
    # Decoded here rather than taken from `sequence.text`, so the EOS and other special tokens
    # the model emitted are not part of the text an agent compares.
    text = sampler.tokenizer.decode(completion, skip_special_tokens=True)
    return Completion(
        text=text,
        tokens=completion,
        stop_reason=str(seq.stop_reason),
        logprobs=logprobs if args.return_logprobs and logprobs else None,
        prompt_index=index,
        rollout_id=rollout_id,
    )


SPEC = ToolSpec(
    name="sample",
    title="Sample from a model",
    description=(
        "Generate text from a run's current weights (run_id), a saved checkpoint path, or a base "
        "model. Use it to look at what a model writes, and for RL: `prompts` (several) with "
        "num_samples >= 2 returns a group of completions per prompt, each with a rollout_id to "
        "score and pass to train_on_rewards. Give `prompt` for models trained on {prompt, "
        "completion} and `messages` for chat-trained ones, so the prompt matches what training "
        "saw. To measure (loss, exact match over many pairs) use evaluate instead."
    ),
    input_model=SampleInput,
    output_model=SampleOutput,
    handler=sample,
    read_only=True,
    destructive=False,
    idempotent=False,
    open_world=False,
    run_field="model",
)
