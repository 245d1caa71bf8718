"""trio-lint's version, in a module of its own: the CLI, the language server, the SARIF report and
the cache key read it (`trio_lint/__init__.py` re-exports it as `trio_lint.__version__`). Kept
equal to the distribution's version in pyproject.toml (a test checks it)."""

__version__ = "0.1.0"
