"""Checkers of several codes, each one analysis (`base.Checker`): conformance (a call's callee,
keywords and positional count against the API data) and futures (what a call, name or `await`
holds). Each code keeps its rule module in `trio_lint/rules/` and names its checker there."""
