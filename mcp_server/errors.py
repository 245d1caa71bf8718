"""Errors a tool call can end with; each becomes an `is_error` result telling the agent the fix
(`registry.run_call` turns them into results; anything else is reported as unexpected)."""


class TrioMcpError(Exception):
    """Base of every refusal or failure this server reports on purpose."""


class GuardRefusal(TrioMcpError):
    """A configured limit refused the call; the message names the limit and its setting."""

    def __init__(self, what: str, setting: str, value: object) -> None:
        self.setting = setting
        super().__init__(
            f"{what} (limit {setting} = {value!r}). To change it, set `{setting}` in trio-mcp.toml "
            f"or [tool.trio-mcp] in pyproject.toml, or start the server with `--set {setting}=...`."
        )


class InvalidInput(TrioMcpError):
    """The arguments are well-typed but cannot be used; the message names the field and the fix."""


class BackendFailure(TrioMcpError):
    """The PyTRIO backend refused or failed the request; the SDK's message, secrets removed."""


class TrainingStopped(TrioMcpError):
    """Training stopped early (NaN or divergence); the message says at which step and why."""


class ServerStopping(TrioMcpError):
    """The server is shutting down (SIGTERM or SIGINT); the message says what was done."""
