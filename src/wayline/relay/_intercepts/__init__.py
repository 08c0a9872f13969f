"""Intercepts and guardrails: registries, chains, sanitizers, outcomes and registration gates."""
