"""Datums built from a tokenized HF dataset row."""

import pytrio as trio


def to_datum(row):
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(row["input_ids"][:-1]),
        loss_fn_inputs={"labels": row["labels"][1:]},  # bug: PTR302
    )


def train(training: trio.TrainingClient, rows):
    batch = [to_datum(row) for row in rows]
    return training.forward_backward(batch, "cross_entropy").result()
