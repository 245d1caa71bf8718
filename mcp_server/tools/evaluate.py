"""evaluate: how well a model answers a list of prompt/answer pairs (or chats), in one call.

For each example the loss per answer token comes from one forward pass over prompt + answer: the
sampler's `compute_logprobs` (pytrio 0.2.9) gives the logprob of every token given the ones
before it, and the answer's tokens (with the EOS the model should end on) are averaged. Nothing
trains and no budget step is spent. With `generate`, each prompt is also answered greedily and
compared with the expected answer: exact match (whitespace at the ends ignored) and contains.
"""

from __future__ import annotations

import statistics
from typing import Any

import anyio
from pydantic import BaseModel, Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.datums import TokenExample, build_sft_example, split_chat
from mcp_server.errors import BackendFailure
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import backend, sdk
from mcp_server.tools._sampling import MODEL, open_sampler
from mcp_server.tools.train_sft import ChatExample, Example

# Requests in flight at once: enough to keep the backend batching, few enough to stay polite.
CONCURRENCY = 16


class EvaluateInput(ToolInput):
    model: str = MODEL
    examples: list[Example] = Field(
        min_length=1,
        max_length=1024,
        description="{prompt, completion} pairs or {messages} chats, as train_sft takes them; "
        "the completion (the last assistant message) is the expected answer.",
    )
    generate: bool = Field(
        False,
        description="Also answer each prompt greedily (temperature 0) and report exact-match "
        "and contains rates against the expected answers.",
    )
    max_tokens: int = Field(
        64, ge=1, le=8192, description="Tokens a generated answer may have at most."
    )


class ExampleResult(BaseModel):
    loss: float = Field(description="Mean negative logprob per answer token (EOS included).")
    answer_tokens: int
    answer: str | None = Field(None, description="The greedy answer (with generate).")
    exact_match: bool | None = None
    contains: bool | None = Field(
        None, description="The expected answer appears inside the generated one."
    )


class EvaluateOutput(BackendResult):
    model: str
    model_kind: str = Field(description="'run', 'checkpoint' or 'base_model'.")
    loss: float = Field(description="Loss per answer token over all examples (token-weighted).")
    answer_tokens: int
    exact_match_rate: float | None = Field(None, description="With generate: share of exact.")
    contains_rate: float | None = Field(None, description="With generate: share containing.")
    examples: list[ExampleResult]

    def summary(self) -> str:
        text = (
            f"evaluate: {self.model_kind} {self.model[:120]}: loss per answer token "
            f"{self.loss:.4g} over {len(self.examples)} examples"
        )
        if self.exact_match_rate is not None:
            text += f"; exact match {self.exact_match_rate:.3g}, contains {self.contains_rate:.3g}"
        return text + " (full result: structured content)"


def _expected(example: Any, tokenizer: Any, index: int) -> tuple[str, TokenExample]:
    """The expected answer's text, and prompt + answer as tokens exactly as train_sft builds
    them (so this loss and train_sft's are the same measure)."""
    if isinstance(example, ChatExample):
        messages = [m.model_dump() for m in example.messages]
        prompt, completion = split_chat(tokenizer, messages, index)
        built = build_sft_example(tokenizer, prompt, completion, index, chat=True)
        return messages[-1]["content"], built
    built = build_sft_example(tokenizer, example.prompt, example.completion, index, chat=False)
    return example.completion, built


def _answer_loss(logprobs: list[float | None], example: TokenExample) -> tuple[float, int]:
    """Mean -logprob of the positions that carry weight (the answer), and how many there are.

    logprobs[i] scores token i of prompt + answer given the tokens before it; `example` is the
    shifted form, whose weights[i] belongs to token i + 1.
    """
    picked = [logprobs[i + 1] for i, weight in enumerate(example.weights) if weight > 0]
    if any(value is None for value in picked):
        raise BackendFailure("the backend returned no logprob for part of an answer")
    values = [float(v) for v in picked if v is not None]
    return (-statistics.fmean(values) if values else 0.0), len(values)


async def evaluate(app: AppState, args: EvaluateInput, ctx: ToolCall) -> EvaluateOutput:
    import pytrio as trio

    config = app.config
    guards.check_examples(config, len(args.examples))
    if args.generate:
        guards.check_sampling(config, args.max_tokens, 1)
    be = await backend(app)
    sampler = await open_sampler(app, be, args.model)
    tokenizer = sampler.tokenizer
    built = [_expected(e, tokenizer, i) for i, e in enumerate(args.examples)]
    for index, (_, example) in enumerate(built):
        guards.check_example_length(config, index, len(example.input_tokens) + 1)
    results: list[ExampleResult | None] = [None] * len(built)
    limit = anyio.Semaphore(CONCURRENCY)
    eos = getattr(tokenizer, "eos_token_id", None)

    async def one(index: int) -> None:
        expected, example = built[index]
        tokens = [*example.input_tokens, example.target_tokens[-1]]
        async with limit:
            logprobs = await sdk(
                f"scoring examples[{index}]",
                sampler.client.compute_logprobs_async(trio.ModelInput.from_ints(tokens)),
            )
            loss, count = _answer_loss(list(logprobs), example)
            result = ExampleResult(loss=loss, answer_tokens=count)
            if args.generate:
                prompt_tokens = tokens[: len(tokens) - count]
                params = trio.SamplingParams(
                    max_tokens=args.max_tokens,
                    temperature=0.0,
                    stop=[eos] if eos is not None else None,
                )
                response = await sdk(
                    f"answering examples[{index}]",
                    sampler.client.sample_async(
                        prompt=trio.ModelInput.from_ints(prompt_tokens),
                        num_samples=1,
                        sampling_params=params,
                    ),
                )
                answer = tokenizer.decode(
                    list(response.sequences[0].tokens), skip_special_tokens=True
                )
                result.answer = answer
                result.exact_match = answer.strip() == expected.strip()
                result.contains = expected.strip() in answer
        results[index] = result

    async with anyio.create_task_group() as group:
        for index in range(len(built)):
            group.start_soon(one, index)
    done = [r for r in results if r is not None]
    total = sum(r.answer_tokens for r in done)
    loss = sum(r.loss * r.answer_tokens for r in done) / total if total else 0.0
    return EvaluateOutput(
        model=args.model,
        model_kind=sampler.kind,
        loss=loss,
        answer_tokens=total,
        exact_match_rate=(
            sum(bool(r.exact_match) for r in done) / len(done) if args.generate else None
        ),
        contains_rate=sum(bool(r.contains) for r in done) / len(done) if args.generate else None,
        examples=done,
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="evaluate",
    title="Evaluate on prompt/answer pairs",
    description=(
        "Measure a run, checkpoint or base model on many {prompt, completion} pairs or "
        "{messages} chats in one call: the loss per answer token (a forward pass: no training, "
        "no budget step) and, with generate=true, the greedy answers with exact-match and "
        "contains rates. Use it after train_sft to check what was learnt, and to compare "
        "checkpoints; use sample to see free-form generations."
    ),
    input_model=EvaluateInput,
    output_model=EvaluateOutput,
    handler=evaluate,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
    run_field="model",
)
