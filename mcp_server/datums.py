"""Token data built and checked on the server, so an agent cannot get the classic pitfalls wrong.

`build_sft_datum` turns a prompt/completion pair or a chat into one `Datum`: prompt tokens weight 0,
completion tokens weight 1, an EOS at the end, and the one-token shift (`model_input = tokens[:-1]`,
`target_tokens = tokens[1:]`). `check_datums` validates the token-level datums `train_step` receives
and explains each problem the way the trio-lint rules explain the same mistake in code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from mcp_server.errors import InvalidInput
from pytrio_facts import IGNORE_TARGET_ID, LOSSES
from pytrio_facts.sdk import LossName

REQUIRED_INPUTS: dict[str, tuple[str, ...]] = {loss.name: loss.required_inputs for loss in LOSSES}
OPTIONAL_INPUTS: dict[str, tuple[str, ...]] = {loss.name: loss.optional_inputs for loss in LOSSES}
IGNORE_INDEX = IGNORE_TARGET_ID

__all__ = ["REQUIRED_INPUTS", "LossName", "TokenExample", "build_sft_example", "check_datum"]


class Tokenizer(Protocol):
    """The part of the SDK's tokenizer (`training_client.get_tokenizer()`) the builder uses."""

    eos_token_id: int | None

    def encode(self, text: str, add_special_tokens: bool = ...) -> list[int]: ...

    def decode(self, ids: list[int], skip_special_tokens: bool = ...) -> str: ...


@dataclass(frozen=True)
class TokenExample:
    """One example as tokens: what the model reads, what it predicts, how much each counts."""

    input_tokens: list[int]
    target_tokens: list[int]
    weights: list[float]

    @property
    def trained_tokens(self) -> int:
        return sum(1 for w in self.weights if w > 0)

    def to_datum(self) -> Any:
        import pytrio as trio

        return trio.Datum(
            model_input=trio.ModelInput.from_ints(self.input_tokens),
            loss_fn_inputs={
                "target_tokens": trio.types.TensorData(
                    data=self.target_tokens, dtype="int64", shape=[len(self.target_tokens)]
                ),
                "weights": trio.types.TensorData(
                    data=self.weights, dtype="float32", shape=[len(self.weights)]
                ),
            },
        )


def _encode(tokenizer: Tokenizer, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False))


def _eos_id(tokenizer: Tokenizer) -> int:
    eos = getattr(tokenizer, "eos_token_id", None)
    if eos is None:
        raise InvalidInput("the backend's tokenizer has no EOS token, so completions cannot end")
    return int(eos)


def render_chat(tokenizer: Any, messages: list[dict[str, str]], generation_prompt: bool) -> str:
    if not getattr(tokenizer, "chat_template", None):
        raise InvalidInput(
            "the backend's tokenizer has no chat template: pass examples as {prompt, completion}"
        )
    text: str = tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=generation_prompt
    )
    return text


def split_chat(tokenizer: Any, messages: list[dict[str, str]], index: int) -> tuple[str, str]:
    """Prompt text (everything before the last assistant turn, with the generation prompt) and the
    completion text (that turn, including the template's end-of-turn token)."""
    if messages[-1]["role"] != "assistant":
        raise InvalidInput(
            f"examples[{index}].messages must end with an assistant message: that turn is what "
            "the model learns to write"
        )
    prompt = render_chat(tokenizer, messages[:-1], generation_prompt=True)
    full = render_chat(tokenizer, messages, generation_prompt=False)
    if not full.startswith(prompt):
        raise InvalidInput(
            f"examples[{index}]: the chat template renders the conversation differently with and "
            "without the last turn; pass the example as {prompt, completion} instead"
        )
    return prompt, full[len(prompt) :].rstrip("\n")


def build_sft_example(
    tokenizer: Any, prompt_text: str, completion_text: str, index: int, chat: bool
) -> TokenExample:
    """Tokenize prompt and completion separately, so the weight boundary is exact."""
    prompt_ids = _encode(tokenizer, prompt_text)
    completion_ids = _encode(tokenizer, completion_text)
    eos = _eos_id(tokenizer)
    if not completion_ids or (chat and completion_ids == [eos]):
        raise InvalidInput(f"examples[{index}]: the completion is empty; give it some text")
    if completion_ids[-1] != eos:
        # Without an EOS the model never learns to stop and samples run to max_tokens.
        completion_ids.append(eos)
    tokens = prompt_ids + completion_ids
    weights = [0.0] * len(prompt_ids) + [1.0] * len(completion_ids)
    if len(tokens) < 2:
        raise InvalidInput(f"examples[{index}] is too short to train on")
    # The one-token shift: position t reads tokens[t] and is scored on predicting tokens[t + 1].
    return TokenExample(input_tokens=tokens[:-1], target_tokens=tokens[1:], weights=weights[1:])


def sample_prompt_tokens(
    tokenizer: Any, prompt: str | None, messages: list[dict[str, str]] | None
) -> list[int]:
    """The prompt as training saw it: raw text for `prompt`, the chat template for `messages`."""
    if messages is not None:
        return _encode(tokenizer, render_chat(tokenizer, messages, generation_prompt=True))
    return _encode(tokenizer, prompt or "")


def _finite(values: list[float], where: str) -> None:
    for position, value in enumerate(values):
        if not math.isfinite(value):
            raise InvalidInput(
                f"{where}[{position}] is {value}: every value must be finite (a NaN or inf "
                "poisons the whole batch's gradient)"
            )


HF_LABEL_KEYS = ("labels", "target_ids", "targets", "input_ids", "label_ids")


def lint_rule_text(code: str, **values: object) -> str:
    """The message trio-lint prints for the same mistake in code, with its code and name, so an
    agent reads one explanation whether it wrote the bug in a script or in a tool call."""
    from trio_lint.rules import get_rule

    rule = get_rule(code)
    if rule is None:  # the rule set changed; the caller's own explanation still stands
        return ""
    return f" [trio-lint {rule.code} {rule.name}: {rule.message.format(**values)}]"


def check_datum(
    index: int, model_input: list[int], inputs: dict[str, list[float]], loss_fn: str
) -> int:
    """Validate one token-level datum; return how many target positions carry weight."""
    where = f"datums[{index}]"
    length = len(model_input)
    if length == 0:
        raise InvalidInput(f"{where}.model_input is empty; a datum needs at least one token")
    if IGNORE_INDEX in model_input:
        raise InvalidInput(
            f"{where}.model_input contains {IGNORE_INDEX}; mask with weights instead"
            + lint_rule_text("PTR301")
        )
    if any(token < 0 for token in model_input):
        raise InvalidInput(f"{where}.model_input has a negative token id; ids start at 0")
    required = REQUIRED_INPUTS[loss_fn]
    missing = [name for name in required if name not in inputs]
    hf_keys = [key for key in HF_LABEL_KEYS if key in inputs]
    if "target_tokens" in missing and hf_keys:
        raise InvalidInput(
            f"{where}.loss_fn_inputs has {hf_keys[0]!r} but no 'target_tokens'"
            + lint_rule_text("PTR302", key=hf_keys[0])
        )
    if missing:
        raise InvalidInput(
            f"{where}.loss_fn_inputs lacks {', '.join(missing)}: loss {loss_fn!r} needs "
            f"{', '.join(required)} (one value per model_input position)"
        )
    allowed = {*required, *OPTIONAL_INPUTS[loss_fn]}
    if "weights" in inputs and "weights" not in allowed:
        raise InvalidInput(
            f"{where}.loss_fn_inputs has weights, which loss {loss_fn!r} ignores"
            + lint_rule_text("PTR304", loss=loss_fn)
        )
    unknown = sorted(set(inputs) - allowed)
    if unknown:
        raise InvalidInput(
            f"{where}.loss_fn_inputs has unknown keys {unknown}; loss {loss_fn!r} reads "
            f"{', '.join(sorted(allowed))}"
        )
    for name, values in inputs.items():
        if len(values) != length:
            raise InvalidInput(
                f"{where}.loss_fn_inputs.{name} has {len(values)} values but model_input has "
                f"{length} tokens: give one value per position (target_tokens = tokens[1:] for "
                "model_input = tokens[:-1])"
            )
        _finite(values, f"{where}.loss_fn_inputs.{name}")
    targets = inputs["target_tokens"]
    if any(float(t) != int(t) for t in targets):
        raise InvalidInput(f"{where}.loss_fn_inputs.target_tokens must be integer token ids")
    if length > 1 and [int(t) for t in targets] == list(model_input):
        # The same mistake trio-lint reports in code: targets built from the unshifted sequence.
        raise InvalidInput(
            f"{where}: target_tokens equals model_input, so the model is trained to copy its "
            "input. Shift by one token: model_input = tokens[:-1], target_tokens = tokens[1:]"
            + lint_rule_text("PTR305")
        )
    if any(int(t) < 0 and int(t) != IGNORE_INDEX for t in targets):
        raise InvalidInput(
            f"{where}.loss_fn_inputs.target_tokens has a negative id other than {IGNORE_INDEX}; "
            "mask positions with weights = 0 instead"
        )
    weights = inputs.get("weights")
    if loss_fn == "cross_entropy" and weights is not None:
        if any(w < 0 for w in weights):
            raise InvalidInput(
                f"{where}.loss_fn_inputs.weights has a negative weight; use 0 to mask"
            )
        return sum(1 for w, t in zip(weights, targets, strict=True) if w > 0 and t != IGNORE_INDEX)
    return sum(1 for t in targets if t != IGNORE_INDEX)


def to_sdk_datum(model_input: list[int], inputs: dict[str, list[float]]) -> Any:
    import pytrio as trio

    tensors = {}
    for name, values in inputs.items():
        if name == "target_tokens":
            tensors[name] = trio.types.TensorData(
                data=[int(v) for v in values], dtype="int64", shape=[len(values)]
            )
        else:
            tensors[name] = trio.types.TensorData(
                data=[float(v) for v in values], dtype="float32", shape=[len(values)]
            )
    return trio.Datum(model_input=trio.ModelInput.from_ints(model_input), loss_fn_inputs=tensors)
