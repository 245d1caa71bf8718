"""Storage: SQLite metadata and checkpoint files in the data directory."""
