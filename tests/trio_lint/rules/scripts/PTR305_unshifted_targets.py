"""Causal-LM datums with labels = input_ids, as for AutoModelForCausalLM."""

import pytrio as trio


def build(tokenizer, text):
    tokens = tokenizer.encode(text)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens),
        loss_fn_inputs={"target_tokens": tokens},  # bug: PTR305
    )


def train(training: trio.TrainingClient, tokenizer, texts):
    batch = [build(tokenizer, text) for text in texts]
    return training.forward_backward(batch, "cross_entropy").result()
