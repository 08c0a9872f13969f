"""Agents built in Python as users build them, and real sessions of them recorded as ATIF.

``make_agent`` is a shop assistant: two function tools and ``.use`` middleware that quotes
euros whatever currency the model asks for. The tests import it, and the CLI tests copy this
file next to the trajectory and name it with ``--agent replay_agents:make_agent``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import wayline
from wayline.testing import ScriptedServer

RATES = {"EUR": 0.92, "USD": 1.0}
QUESTION = "What does a coffee cost?"


def lookup_price(item: str) -> float:
    """The price of an item in US dollars."""
    return {"coffee": 3.0}.get(item, 1.0)


def convert(amount: float, currency: str) -> str:
    """Convert an amount of US dollars to another currency."""
    return f"{amount * RATES[currency]:.2f} {currency}"


def to_euros(args: dict[str, Any], tool_name: str, **kw: Any) -> dict[str, Any] | None:
    """tool_request middleware: this shop quotes euros."""
    if tool_name == "convert" and args.get("currency") != "EUR":
        return {"args": {**args, "currency": "EUR"}, "reason": "the shop quotes euros"}
    return None


def make_agent(**kw: Any) -> wayline.Agent:
    """The shop assistant (``kw``: what the caller adds, e.g. home, base_url, plugins)."""
    agent = wayline.Agent(model="shop-model", tools=[lookup_price, convert], **kw)
    agent.use("tool_request", to_euros)
    return agent


PRICE_CALL = {"name": "lookup_price", "id": "call_price", "arguments": {"item": "coffee"}}
CONVERT_CALL = {
    "name": "convert",
    "id": "call_convert",
    "arguments": {"amount": 3.0, "currency": "USD"},
}
SHOP_SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": {"first_user_contains": "coffee"},
            "turns": [
                {"content": "Looking it up.", "tool_calls": [PRICE_CALL]},
                {"tool_calls": [CONVERT_CALL]},
                {"content": "A coffee costs 2.76 EUR."},
            ],
        }
    ]
}


@contextmanager
def clean_relay_env() -> Iterator[None]:
    """No ``*_RELAY_*`` variable of the caller's environment moves the recording."""
    with pytest.MonkeyPatch.context() as mp:
        for var in list(os.environ):
            if var.startswith(("WAYLINE_RELAY_", "HERMES_NEMO_RELAY_")):
                mp.delenv(var)
        yield


def _atif(home: Path) -> Path:
    (path,) = (home / "relay" / "atif").glob("*.json")
    return path


def record_shop(root: Path) -> Path:
    """Run the shop assistant on one question against the scripted model, recording ATIF
    with observability/relay; returns the trajectory's path."""
    home = root / "home"
    with (
        clean_relay_env(),
        ScriptedServer(SHOP_SCRIPT) as server,
        make_agent(base_url=server.base_url, home=home, plugins=["observability/relay"]) as agent,
    ):
        result = agent.run(QUESTION)
    assert result.text == "A coffee costs 2.76 EUR.", result
    return _atif(home)


NAP_S = 60.0
CANCELLED_SCRIPT: dict[str, Any] = {
    "default": {"content": "fine"},
    "rules": [
        {
            "match": {"last_user_contains": "slow", "last_role": "user"},
            "respond": {"content": "too late", "delay": NAP_S},
        },
        {
            "match": {"last_user_contains": "nap", "last_role": "user"},
            "respond": {
                "content": "Napping.",
                "tool_calls": [{"name": "nap", "id": "call_nap", "arguments": {"seconds": NAP_S}}],
            },
        },
    ],
}


class Napper:
    """A ``nap`` tool that sleeps until the test wakes it (it cannot see a cancel)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.wake = threading.Event()

    def nap(self, seconds: float) -> str:
        """Sleep for some seconds."""
        self.started.set()
        self.wake.wait(seconds)
        return "rested"


def nap(seconds: float) -> str:
    """Sleep for some seconds."""
    return "rested"


def make_napper(**kw: Any) -> wayline.Agent:
    """The agent of the cancelled session, as the replay builds it."""
    return wayline.Agent(model="m", tools=[nap], **kw)


def record_cancelled(root: Path) -> Path:
    """A session with two cancelled turns (``arun``'s task cancelled) between two answered:

    1. ``hello``: answered;
    2. ``slow one``: cancelled while the model call hung;
    3. ``nap please``: cancelled while the ``nap`` tool ran;
    4. ``bye``: answered.
    """
    home = root / "home"
    napper = Napper()

    async def cancel_when(agent: wayline.Agent, text: str, ready: Callable[[], object]) -> None:
        task = asyncio.create_task(agent.arun(text))
        await asyncio.to_thread(ready)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with clean_relay_env(), ScriptedServer(CANCELLED_SCRIPT) as server:
        agent = wayline.Agent(
            model="m",
            base_url=server.base_url,
            home=home,
            tools=[napper.nap],
            plugins=["observability/relay"],
        )
        with agent:
            assert agent.run("hello").completed
            # Cancelled once the server holds the request, and once the tool runs.
            asyncio.run(cancel_when(agent, "slow one", lambda: server.wait_for_requests(2, 30)))
            asyncio.run(cancel_when(agent, "nap please", lambda: napper.started.wait(30)))
            napper.wake.set()
            assert agent.run("bye").text == "fine"
    return _atif(home)
