"""Helpers shared by more than one test folder: import them as `tests.support.<module>`."""
