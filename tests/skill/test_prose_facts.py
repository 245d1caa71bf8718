"""Facts written as prose in the hand-written docs agree with pytrio_facts (and so with the SDK)."""

import re
from pathlib import Path

import pytest

import pytrio_facts as facts

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(
    [
        ROOT / "SKILL.md",
        *(ROOT / "references").glob("*.md"),
        *(ROOT / "best-practices").glob("*.md"),
        *(ROOT / "examples").glob("*.py"),
    ]
)
HAND_WRITTEN = [p for p in DOCS if p.name not in {"lint-rules.md", "mcp-tools.md"}]
CODES = {fact.code for fact in facts.ERROR_CODES}
CODE_PREFIXES = ("validation.", "auth.", "training.", "sampling.", "actor.", "control.",
                 "dependency.", "download.", "configuration.", "event.", "sdk.")  # fmt: skip


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=lambda p: p.name)
def test_error_codes_named_in_prose_exist(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_]+(?:\.[a-z_]+)+)`", text))
    unknown = {c for c in named if c.startswith(CODE_PREFIXES) and c not in CODES}
    assert not unknown, f"{path.name} names error codes pytrio 0.2.9 does not have: {unknown}"


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=lambda p: p.name)
def test_checkpoint_name_pattern_and_rank_range(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for pattern in re.findall(r"`(\^\[A-Za-z0-9\][^`]*\$)`", text):
        assert pattern == facts.LIMITS.checkpoint_name_pattern, path.name
    for low, high in re.findall(r"\b(\d+)\.\.(\d+)\b", text):
        if "rank" in text:
            assert (int(low), int(high)) == (facts.LIMITS.lora_rank_min, facts.LIMITS.lora_rank_max)


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=lambda p: p.name)
def test_metric_keys_in_code_are_the_sdks(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":  # prose may quote the wrong keys on purpose; code may not
        text = "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    used = set(re.findall(r"metrics\[[\"'](\w[^\"']*)[\"']\]", text))
    custom = {key for key in used if key.startswith("dpo_") or key == "nll"}  # custom-loss metrics
    assert used - custom <= set(facts.METRIC_KEYS), f"{path.name}: {used - custom}"


def test_adam_defaults_quoted_in_prose() -> None:
    defaults = {f.name: f.default for f in facts.ADAM_PARAMS}
    for path in HAND_WRITTEN:
        text = path.read_text(encoding="utf-8")
        for name, value in re.findall(r"`?(beta2|eps)=([\d.e-]+)`?", text):
            if "AdamParams" in text or "PyTorch" in text:
                assert float(value) in (defaults[name], 0.999, 1e-8), f"{path.name}: {name}={value}"
