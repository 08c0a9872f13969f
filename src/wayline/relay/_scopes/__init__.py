"""Scopes, marks, metrics, handles, stacks and event publication: behind ``relay.scope`` & co."""
