"""trio-mcp: an MCP server with guarded train, sample and checkpoint tools."""
