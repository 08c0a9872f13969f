"""The hooks ``observability/otel`` observes (no OpenTelemetry import here)."""

from wayline.plugins.observability import OTEL_HOOKS as HOOKS

__all__ = ["HOOKS"]
