"""Control-plane routes under /api, one module per endpoint group."""
