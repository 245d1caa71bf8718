"""The user's base directories, as the XDG Base Directory Specification defines them
(https://specifications.freedesktop.org/basedir-spec/latest/): `$XDG_DATA_HOME`,
`$XDG_CACHE_HOME` and `$XDG_STATE_HOME` when set to an absolute path, else their defaults under
the home directory. The one place the products resolve them (trio-lint's cache, trio-local's
data and weights cache, trio-mcp's audit log and ledger)."""

from __future__ import annotations

import os
from typing import Literal

Kind = Literal["data", "cache", "state"]

_VARIABLES: dict[Kind, tuple[str, tuple[str, ...]]] = {
    "data": ("XDG_DATA_HOME", (".local", "share")),
    "cache": ("XDG_CACHE_HOME", (".cache",)),
    "state": ("XDG_STATE_HOME", (".local", "state")),
}


def base_dir(kind: Kind) -> str:
    """The user's base directory of `kind`. A relative or empty value of the variable is
    ignored, as the specification requires."""
    variable, default = _VARIABLES[kind]
    value = os.environ.get(variable, "")
    if os.path.isabs(value):
        return value
    return os.path.join(os.path.expanduser("~"), *default)


def app_dir(kind: Kind, app: str) -> str:
    """`app`'s own directory of `kind`, such as `~/.cache/trio-lint` (not created here)."""
    return os.path.join(base_dir(kind), app)
