"""HTTP: one Starlette app serving the control plane under /api and the actor plane under
/actor, with one route module per endpoint group, named after the endpoints' paths."""
