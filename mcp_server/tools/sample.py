"""sample: generate from a run's current weights, a saved checkpoint, or a base model."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.backend import Backend, call_sdk
from mcp_server.datums import sample_prompt_tokens
from mcp_server.errors import InvalidInput
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import ID_PATTERN, backend, run_tokenizer, sdk, submit
from mcp_server.tools.train_sft import ChatMessage


class SampleInput(ToolInput):
    model: str = Field(
        min_length=1,
        max_length=1000,
        pattern=ID_PATTERN,
        description="A run_id open in this session (its current weights), a checkpoint path "
        "saved in this session, or a base model from list_models.",
    )
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
    max_tokens: int = Field(64, ge=1, le=8192, description="Tokens to generate at most.")
    temperature: float = Field(1.0, ge=0, le=2, description="0 is greedy.")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling mass; 1 disables it.")
    top_k: int = Field(-1, ge=-1, le=1000, description="-1 disables top-k.")
    stop: list[str] | None = Field(None, max_length=8, description="Strings that end generation.")
    num_samples: int = Field(1, ge=1, le=64, description="Completions to generate.")
    seed: int | None = Field(None, ge=0, le=2**31 - 1, description="Seed for reproducible samples.")
    return_logprobs: bool = Field(False, description="Include each generated token's logprob.")

    @model_validator(mode="after")
    def _one_prompt(self) -> SampleInput:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("give exactly one of prompt or messages")
        if self.stop and any(not s or len(s) > 200 for s in self.stop):
            raise ValueError("each stop string must be 1-200 characters")
        return self


class Completion(BaseModel):
    text: str
    tokens: list[int]
    stop_reason: str
    logprobs: list[float] | None = None


class SampleOutput(BackendResult):
    model: str
    model_kind: str = Field(description="'run', 'checkpoint' or 'base_model'.")
    samples: list[Completion]


async def _sampler(app: AppState, be: Backend, model: str) -> tuple[Any, Any, str]:
    """The sampling client, the tokenizer, and what kind of model `model` named."""
    run = app.runs.runs.get(model)
    if run is not None:
        if run.sampler is None or run.sampler[0] != run.step:
            # An event on the training client: a cancel must not cut its submission in half.
            client = await submit(
                "saving weights for sampling",
                run.client.save_weights_and_get_sampling_client_async(),
            )
            run.sampler = (run.step, client)
        return run.sampler[1], await run_tokenizer(run), "run"
    saved = app.runs.checkpoints.get(model)
    if saved is not None:
        owner = app.runs.runs[saved[0]]
        client = await sdk(
            "opening the checkpoint for sampling",
            be.service.create_sampling_client_async(base_model=owner.base_model, model_path=model),
        )
        return client, await run_tokenizer(owner), "checkpoint"
    offered = list(await call_sdk("listing models", be.service.get_supported_models))
    if model in offered:
        guards.check_model(app.config, model, offered)
        client = await sdk(
            "opening the base model", be.service.create_sampling_client_async(base_model=model)
        )
        tokenizer = await call_sdk("loading the tokenizer", client.get_tokenizer)
        return client, tokenizer, "base_model"
    raise InvalidInput(
        f"model {model!r} is neither a run open in this session, a checkpoint saved in this "
        f"session, nor a base model ({', '.join(offered)}); use create_training_run, "
        "resume_training_run or list_models"
    )


async def sample(app: AppState, args: SampleInput, ctx: ToolCall) -> SampleOutput:
    import pytrio as trio

    guards.check_sampling(app.config, args.max_tokens, args.num_samples)
    be = await backend(app)
    client, tokenizer, kind = await _sampler(app, be, args.model)
    messages = [m.model_dump() for m in args.messages] if args.messages else None
    tokens = sample_prompt_tokens(tokenizer, args.prompt, messages)
    if not tokens:
        raise InvalidInput("the prompt tokenizes to nothing; give some text")
    params = trio.SamplingParams(
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        top_k=args.top_k,
        stop=args.stop,
        seed=args.seed,
    )
    response = await sdk(
        "sampling",
        client.sample_async(
            prompt=trio.ModelInput.from_ints(tokens),
            num_samples=args.num_samples,
            sampling_params=params,
        ),
    )
    samples = []
    for sequence in response.sequences:
        # Decoded here rather than taken from `sequence.text`, so the EOS and other special
        # tokens the model emitted are not part of the text an agent compares.
        text = tokenizer.decode(list(sequence.tokens), skip_special_tokens=True)
        logprobs = list(sequence.logprobs) if args.return_logprobs and sequence.logprobs else None
        samples.append(
            Completion(
                text=text,
                tokens=list(sequence.tokens),
                stop_reason=str(sequence.stop_reason),
                logprobs=logprobs,
            )
        )
    return SampleOutput(model=args.model, model_kind=kind, samples=samples, **backend_fields(be))


SPEC = ToolSpec(
    name="sample",
    title="Sample from a model",
    description=(
        "Generate text from a run's current weights (run_id), a saved checkpoint path, or a base "
        "model. Give `prompt` for models trained on {prompt, completion} and `messages` for "
        "chat-trained ones, so the prompt matches what training saw."
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
