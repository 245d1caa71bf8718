"""trio-lint inside other tools: the flake8 plugin (flake8; entry point `flake8.extension` PTR).
The language server is `trio_lint.server`, the command line `trio_lint.cli`."""
