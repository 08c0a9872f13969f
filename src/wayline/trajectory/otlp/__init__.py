"""``wayline export otlp``: recorded sessions (ATOF, ATIF) sent as OpenTelemetry spans after
the fact, through the live ``observability/otel`` plugin's own mapping."""
