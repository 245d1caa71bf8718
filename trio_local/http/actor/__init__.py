"""Actor-plane routes under /actor: events, heartbeat and sampling."""
