"""``wayline serve``: a local web app over the session index (needs ``wayline[serve]``).

A session list with the filters of ``wayline sessions list`` and full-text search, charts of
cost, tokens, latency and errors over time and by model and tool, a session in the viewer of
``wayline view`` (deep links to a step), the diff of two sessions, a live tail over
Server-Sent Events, and a JSON API for the same. Starlette and uvicorn; no CDN, no network.

    app = create_app(ServeConfig(paths=[Path("runs")]))   # any ASGI server runs it
"""

from wayline.serve.app import (
    ServeConfig,
    ServeError,
    bind,
    check_host,
    create_app,
    is_loopback,
    run,
)

__all__ = ["ServeConfig", "ServeError", "bind", "check_host", "create_app", "is_loopback", "run"]
