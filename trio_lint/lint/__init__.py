"""One document, bytes to diagnostics: the prefilter (prefilter), the document's units
(`trio_lint.sources`), parse (parse), the semantic model and the dispatch to the rules
(dispatch), `# noqa` (noqa), findings (findings) and their fixes (fixes);
`linter.lint_document` is the entry."""
