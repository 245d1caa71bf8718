"""The wire protocol: requests are validated with the SDK's own pydantic models from
`pytrio.protocol`, and responses are built through its response models, so a drift between
trio-local and the pinned SDK shows up as a validation error here, not in user code.
"""
