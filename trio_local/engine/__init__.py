"""The engine: the tiny model, LoRA training, losses, sampling and the tokenizer."""
