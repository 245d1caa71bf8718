"""What the user configured, read before anything runs: `[tool.trio-lint]` / `trio-lint.toml`
(config), code selectors (selectors) and the SDK version the code targets (target_version)."""
