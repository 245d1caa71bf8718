"""Policy losses, auto_shift, custom losses and batch splitting through the real SDK."""

from __future__ import annotations

import math

import pytest
import pytrio as trio

from tests.support.local import MODEL, read_stats

TEXT = "The quick brown fox jumps over the lazy dog."


@pytest.fixture(scope="module")
def training(client: trio.ServiceClient):
    return client.create_lora_training_client(base_model=MODEL, rank=8, seed=3)


@pytest.fixture(scope="module")
def tokens(training) -> list[int]:
    return training.get_tokenizer().encode(TEXT)


def policy_datum(tokens: list[int], sampler: list[float], advantages: list[float]) -> trio.Datum:
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": tokens[1:],
            "logprobs": sampler,
            "advantages": advantages,
        },
    )


def per_token(name: str, lp: float, q: float, a: float) -> float:
    """Tinker's per-token losses, written out (default configs)."""
    ratio = math.exp(lp - q)
    if name == "importance_sampling":
        return -ratio * a
    if name == "ppo":
        return -min(ratio * a, min(max(ratio, 0.8), 1.2) * a)
    if name == "cispo":
        return -min(max(ratio, 0.0), 4.0) * lp * a
    return -(lp * a - 0.5 * 0.05 * (lp - q) ** 2)  # dro, beta 0.05


@pytest.mark.parametrize("name", ["importance_sampling", "ppo", "cispo", "dro"])
def test_policy_loss_through_the_sdk_matches_the_definition(training, tokens, name) -> None:
    n = len(tokens) - 1
    sampler = [-1.0 - 0.5 * (i % 3) for i in range(n)]
    advantages = [(1.0 if i % 2 else -0.5) for i in range(n)]
    advantages[2] = 0.0  # masked
    datum = policy_datum(tokens, sampler, advantages)
    result = training.forward([datum], name).result()
    logprobs = result.loss_fn_outputs[0]["logprobs"].tolist()
    elementwise = result.loss_fn_outputs[0]["elementwise_loss"].tolist()
    expected = [
        0.0 if a == 0 else per_token(name, lp, q, a)
        for lp, q, a in zip(logprobs, sampler, advantages, strict=True)
    ]
    assert elementwise == pytest.approx(expected, rel=1e-4, abs=1e-5)
    assert result.metrics["loss_sum"] == pytest.approx(sum(expected), rel=1e-4, abs=1e-4)
    assert result.metrics["token_count"] == n - 1  # the zero advantage is not counted


def test_ignored_target_masks_a_policy_position(training, tokens) -> None:
    n = len(tokens) - 1
    targets = list(tokens[1:])
    targets[0] = -100
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": targets, "logprobs": [-1.0] * n, "advantages": [1.0] * n},
    )
    result = training.forward([datum], "importance_sampling").result()
    assert result.loss_fn_outputs[0]["elementwise_loss"].tolist()[0] == 0.0
    assert result.metrics["token_count"] == n - 1


def test_bad_loss_config_is_a_readable_event_error(training, tokens) -> None:
    n = len(tokens) - 1
    datum = policy_datum(tokens, [-1.0] * n, [1.0] * n)
    with pytest.raises(trio.PyTrioError) as error:
        training.forward([datum], "ppo", loss_fn_config={"clip_epsilon": 0.2}).result()
    assert "clip_epsilon" in str(error.value) and "clip_low_threshold" in str(error.value)


def test_auto_shift_scores_each_position_against_the_next_label(training, tokens) -> None:
    shifted = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:]},
    )
    same = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens),
        loss_fn_inputs={"target_tokens": tokens},
    )
    by_hand = training.forward([shifted], "cross_entropy").result()
    by_server = training.forward([same], "cross_entropy", auto_shift=True).result()
    hand = by_hand.loss_fn_outputs[0]["logprobs"].tolist()
    server = by_server.loss_fn_outputs[0]["logprobs"].tolist()
    # Output t carries log p(tokens[t] | tokens[:t]); the first label is dropped.
    assert server[0] == 0.0
    assert server[1:-1] == pytest.approx(hand[:-1], abs=1e-5)
    assert by_server.metrics["token_count"] == len(tokens) - 1 == by_hand.metrics["token_count"]


def test_oversized_batch_is_split_from_the_advertised_limits(client, tokens, fast_service) -> None:
    from trio_local import catalogue

    limits = catalogue.TRAINER_LIMITS
    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=1)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:]},
    )
    size = limits.max_batch_size + 5
    result = training.forward_backward([datum] * size, "cross_entropy").result()
    assert len(result.loss_fn_outputs) == size
    one = training.forward([datum], "cross_entropy").result()
    assert result.metrics["loss_sum"] == pytest.approx(size * one.metrics["loss_sum"], rel=1e-4)
    stats = read_stats(fast_service)["runs"][training.training_run_cuid]
    assert stats["events"] == 1 + 2 + 1  # init_run, two forward_backward chunks, forward

    too_long = trio.Datum(
        model_input=trio.ModelInput.from_ints([tokens[0]] * (limits.max_seq_len + 1)),
        loss_fn_inputs={"target_tokens": [tokens[0]] * (limits.max_seq_len + 1)},
    )
    with pytest.raises(trio.PyTrioError) as error:
        training.forward_backward([too_long], "cross_entropy")
    assert error.value.code == "validation.training_sample_too_long"


def test_dpo_custom_loss_trains(client) -> None:
    torch = pytest.importorskip("torch")
    training = client.create_lora_training_client(base_model=MODEL, rank=8, seed=7)
    tokenizer = training.get_tokenizer()
    prompt = tokenizer.encode("Q: Which colour is the sky? A:")
    pairs = [(" Blue.", " Green."), (" Blue, mostly.", " Purple.")]

    def datum(answer: str) -> trio.Datum:
        full = prompt + tokenizer.encode(answer)
        weights = [0.0] * (len(prompt) - 1) + [1.0] * (len(full) - len(prompt))
        return trio.Datum(
            model_input=trio.ModelInput.from_ints(full[:-1]),
            loss_fn_inputs={"target_tokens": full[1:], "weights": weights},
        )

    data = [datum(answer) for pair in pairs for answer in pair]  # chosen, rejected, ...
    masks = [torch.tensor(d.loss_fn_inputs["weights"].tolist()) for d in data]
    reference = training.forward(data, "cross_entropy").result()
    ref = [
        float((torch.tensor(out["logprobs"].tolist()) * mask).sum())
        for out, mask in zip(reference.loss_fn_outputs, masks, strict=True)
    ]

    def dpo(batch, logprobs, config=None):
        seq = [(lp * mask).sum() for lp, mask in zip(logprobs, masks, strict=True)]
        margins = [
            0.5 * ((seq[i] - ref[i]) - (seq[i + 1] - ref[i + 1])) for i in range(0, len(seq), 2)
        ]
        loss = -torch.stack([torch.nn.functional.logsigmoid(m) for m in margins]).mean()
        margin = float(sum(m.detach() for m in margins) / len(margins))
        return loss, {"dpo_loss": float(loss.detach()), "margin": margin}

    history = []
    for _ in range(6):
        fb = training.forward_backward_custom(data, dpo)
        opt = training.optim_step(trio.AdamParams(learning_rate=2e-3))
        history.append(fb.result().metrics)
        opt.result()
    assert history[0]["dpo_loss"] == pytest.approx(math.log(2), abs=1e-3)
    assert history[-1]["dpo_loss"] < history[0]["dpo_loss"]
    assert history[-1]["margin"] > 0


def test_a_client_ignoring_the_limits_gets_them_back(client, tokens) -> None:
    from pytrio.model.limits import TrainingLimits

    from trio_local import catalogue

    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=2)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:]},
    )
    training.forward([datum], "cross_entropy").result()
    # A client that does not split (here: the SDK told unlimited limits) sends one big event.
    training._limits = TrainingLimits(None, None, None)
    size = catalogue.TRAINER_LIMITS.max_batch_size + 1
    with pytest.raises(trio.PyTrioError) as error:
        training.forward([datum] * size, "cross_entropy").result()
    message = str(error.value)
    assert error.value.code == "validation_failed" and f"{size} samples" in message
    assert str(catalogue.TRAINER_LIMITS.max_batch_size) in message
    training._limits = TrainingLimits(**vars(catalogue.TRAINER_LIMITS))
    assert training.forward([datum], "cross_entropy").result().metrics["token_count"] > 0


def groups_of(tokens: list[int], loss: str) -> list[trio.Datum]:
    """Two sampled groups: each prompt is out of the loss (weight or advantage 0) and shared by
    three completions, two of which share their first token; the second prompt differs from the
    first only in its first token, so the same targets sit at the same offsets after different
    prefixes."""
    prompts = [tokens[:6], tokens[3:4] + tokens[1:6]]
    completions = [tokens[6:9], tokens[6:8] + tokens[2:3], tokens[3:5]]
    data = []
    for index, (prompt, completion) in enumerate(
        (prompt, completion) for prompt in prompts for completion in completions
    ):
        sequence = prompt + completion
        gate = [0.0] * (len(prompt) - 1) + [1.0 - 0.4 * index] * len(completion)
        inputs: dict = {"target_tokens": sequence[1:]}
        if loss == "cross_entropy":
            inputs["weights"] = gate
        else:
            inputs.update(logprobs=[-1.5] * len(gate), advantages=gate)
        model_input = trio.ModelInput.from_ints(sequence[:-1])
        data.append(trio.Datum(model_input=model_input, loss_fn_inputs=inputs))
    return data


@pytest.mark.parametrize("loss", ["cross_entropy", "importance_sampling"])
def test_positions_out_of_the_loss_and_shared_prompts_train_as_if_each_were_scored(
    client, tokens, loss, monkeypatch
) -> None:
    # The trainer scores positions out of the loss without autograd, once per shared prefix.
    # Against the same step with every position scored with autograd one by one (the trainer
    # told that every valid position is in the loss): the same log-probs, loss and gradient.
    from trio_local.engine import trainer

    def step() -> tuple[list[list[float]], float, float, list[float]]:
        run = client.create_lora_training_client(base_model=MODEL, rank=8, seed=11)
        result = run.forward_backward(groups_of(tokens, loss), loss).result()
        grad_norm = (
            run.optim_step(trio.AdamParams(learning_rate=1e-2)).result().metrics["grad_norm"]
        )
        probe = trio.Datum(
            model_input=trio.ModelInput.from_ints(tokens[:-1]),
            loss_fn_inputs={"target_tokens": tokens[1:]},
        )
        after = run.forward([probe], "cross_entropy").result().loss_fn_outputs[0]["logprobs"]
        logprobs = [output["logprobs"].tolist() for output in result.loss_fn_outputs]
        return logprobs, result.metrics["loss_sum"], grad_norm, after.tolist()

    shared = step()
    monkeypatch.setattr(trainer, "active_positions", lambda valid, gate: valid)
    each = step()
    for got, want in zip(shared[0], each[0], strict=True):
        assert got == pytest.approx(want, abs=1e-5)
    assert shared[1] == pytest.approx(each[1], rel=1e-5)
    assert shared[2] == pytest.approx(each[2], rel=1e-4) and shared[2] > 0
    # After one Adam step from gradients equal up to float rounding (seen: 4e-6 relative; a
    # missing share of the gradient moves these log-probs by far more).
    assert shared[3] == pytest.approx(each[3], rel=1e-4)
