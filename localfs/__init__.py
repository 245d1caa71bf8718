"""The local file system as the products use it: files that appear whole or not at all, and the
user's data, cache and state directories (the XDG base directories).

The lowest layer of the repository: it imports only the standard library, and trio_lint,
trio_local, mcp_server and docgen all write through it. Kept cheap to import: trio-lint's hook
runs on every edit and loads it on each start.
"""
