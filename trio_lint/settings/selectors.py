"""Rule selectors (`select`, `extend-select`, `ignore`, `per-file-ignores`) checked against the
rule registry. Kept out of `config.py` so that reading a configuration never imports the rules."""

from __future__ import annotations

from trio_lint.settings.config import ConfigError, LintConfig, suggest


def validate_codes(config: LintConfig, *, origin: str) -> None:
    groups: list[tuple[str, tuple[str, ...]]] = [
        ("select", config.select or ()),
        ("extend-select", config.extend_select),
        ("ignore", config.ignore),
    ]
    groups += [
        (f"per-file-ignores.{pattern}", codes) for pattern, codes in config.per_file_ignores.items()
    ]
    if not any(codes for _, codes in groups):
        return  # nothing to check: spare the warm path the registry (every rule module)
    from trio_lint.rules import is_known_selector, known_selectors

    for key, codes in groups:
        for code in codes:
            if not is_known_selector(code):
                raise ConfigError(
                    f"{origin}: unknown rule code or prefix `{code}` in `{key}`."
                    f"{suggest(code, known_selectors())} See `trio-lint rule --all`."
                )
