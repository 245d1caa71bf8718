"""Distil a local Hugging Face teacher into a PyTRIO LoRA student: correct code for both libraries
in one file, full of the names the rules look for (no finding expected)."""

import os

import torch
from torch.utils.data import DataLoader, RandomSampler
from transformers import AutoModelForCausalLM, AutoTokenizer

import pytrio as trio

TEACHER = "Qwen/Qwen3-0.6B"
STUDENT = "Qwen/Qwen3-4B-Instruct-2507"


def teacher_answers(prompts, output_dir="teacher_out"):
    tokenizer = AutoTokenizer.from_pretrained(TEACHER)
    model = AutoModelForCausalLM.from_pretrained(TEACHER)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, betas=(0.9, 0.999), eps=1e-8)
    answers = []
    for prompt in prompts:
        ids = tokenizer(prompt, return_tensors="pt")["input_ids"]
        labels = ids.clone()
        labels[:, :2] = -100
        out = model.forward(input_ids=ids, labels=labels)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        generated = model.generate(ids, max_new_tokens=64, do_sample=True, num_beams=1)
        answers.append(tokenizer.decode(generated[0][ids.shape[1]:], skip_special_tokens=True))
    if os.path.exists(output_dir):
        torch.save(model.state_dict(), os.path.join(output_dir, "teacher.pt"))
    sampler = RandomSampler(answers)
    loader = DataLoader(answers, sampler=sampler, batch_size=2)
    return answers, loader


def student_datum(tokenizer, prompt, answer):
    prompt_ids = tokenizer.encode(prompt)
    answer_ids = tokenizer.encode(answer, add_special_tokens=False)
    tokens = prompt_ids + answer_ids
    weights = [0.0] * len(prompt_ids) + [1.0] * len(answer_ids)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


def distil(prompts, steps=10):
    answers, _ = teacher_answers(prompts)
    service = trio.ServiceClient()
    training = service.create_lora_training_client(base_model=STUDENT, rank=32)
    tokenizer = training.get_tokenizer()
    batch = [student_datum(tokenizer, p, a) for p, a in zip(prompts, answers)]
    adam = trio.AdamParams(learning_rate=1e-4, beta2=0.95)
    for step in range(steps):
        fb = training.forward_backward(batch, "cross_entropy")
        optim = training.optim_step(adam)
        metrics = fb.result().metrics
        optim.result()
        print(step, metrics["loss_sum"] / metrics["token_count"])
    saved = training.save_weights_for_sampler("distilled").result()
    sampler = training.create_sampling_client(model_path=saved.path)
    params = trio.SamplingParams(max_tokens=64, temperature=0.0)
    prompt = trio.ModelInput.from_ints(tokenizer.encode(prompts[0]))
    try:
        result = sampler.sample(prompt=prompt, num_samples=1, sampling_params=params).result()
    except (trio.PyTrioError, ValueError) as err:
        print("sampling failed:", err)
        return None
    return result.sequences[0].text
