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


CLIENT_PAGES = {
    "service-client.md": "ServiceClient",
    "training-client.md": "TrainingClient",
    "sampling-client.md": "SamplingClient",
    "rest-client.md": "RestClient",
}


def _signature_rows(text: str, cls: type) -> list[tuple[str, str]]:
    """Backticked `method(params)` of `cls` written out with their parameters (not `(...)`)."""
    found = re.findall(r"`(\w+)\(([^`]*)\)`", text)
    return [(name, args) for name, args in found if hasattr(cls, name) and "..." not in args]


def check_signatures(text: str, cls: type, page: str) -> int:
    """Assert every written-out signature of `cls` in `text` matches the SDK; return how many."""
    import ast
    import inspect

    rows = _signature_rows(text, cls)
    for name, written in rows:
        actual = {
            p.name: p.default
            for p in inspect.signature(getattr(cls, name)).parameters.values()
            if p.name != "self"
        }
        call = ast.parse(f"f({' '.join(written.replace('*, ', '').split())})").body[0].value
        # Prose may shorten a signature (`save_state(name)`): positional names must be the real
        # leading parameters, keywords must exist, and every default shown must be the real one.
        params = list(actual)
        positional = [ast.unparse(arg) for arg in call.args]
        assert positional == params[: len(positional)], f"{page}: {name}({written}) vs {params}"
        assert {k.arg for k in call.keywords} <= set(params), f"{page}: {name}({written})"
        for keyword in call.keywords:
            real = actual[keyword.arg]
            if isinstance(keyword.value, ast.Call):  # e.g. sampling_params=SamplingParams()
                assert ast.unparse(keyword.value) == f"{type(real).__name__}()", page
                assert real == type(real)(), f"{page}: {name} {keyword.arg} default is {real!r}"
                continue
            default = ast.literal_eval(keyword.value)
            assert default == real, f"{page}: {name} {keyword.arg}={default!r}, SDK has {real!r}"
    return len(rows)


@pytest.mark.parametrize("page", sorted(CLIENT_PAGES))
def test_signatures_in_client_pages_match_the_sdk(page: str) -> None:
    import pytrio as trio

    text = (ROOT / "references" / page).read_text(encoding="utf-8")
    assert check_signatures(text, getattr(trio, CLIENT_PAGES[page]), page) >= 2


def test_signature_check_catches_a_wrong_default_and_name() -> None:
    import pytrio as trio

    with pytest.raises(AssertionError, match="rank=16"):
        check_signatures(
            "`create_lora_training_client(base_model, rank=16)`", trio.ServiceClient, "x"
        )
    with pytest.raises(AssertionError):
        check_signatures("`save_state(path)`", trio.TrainingClient, "x")
