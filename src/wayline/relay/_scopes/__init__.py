"""Scopes, marks and metrics: the implementation behind ``wayline.relay.scope``."""
