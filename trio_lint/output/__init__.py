"""What a run gives back: the public result types (diagnostics), rule documentation (explain) and
trio-lint's version (version); the output formats are `trio_lint.reporters`."""
