"""trio-lint: a libcst linter with autofix for the PyTRIO pitfall catalogue."""
