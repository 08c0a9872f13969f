"""Test helpers shipped with wayline: the scripted OpenAI-compatible model server.

``ScriptedServer(script)`` is a context manager; ``.base_url`` is what an agent or an
OpenAI client points at. ``replay(path, agent=...)`` re-runs a recorded session with your
agent and reports the first divergence (``docs/replay.md``). For pytest,
``pytest_plugins = ["wayline.testing.fixtures"]`` gives the ``scripted_server`` fixture
(imported separately: it needs pytest).
"""

from wayline.testing.replay import ReplayAgentError, replay
from wayline.testing.script import Script, ScriptError, load_script
from wayline.testing.server import RecordedRequest, ScriptedServer

__all__ = [
    "RecordedRequest",
    "ReplayAgentError",
    "Script",
    "ScriptError",
    "ScriptedServer",
    "load_script",
    "replay",
]
