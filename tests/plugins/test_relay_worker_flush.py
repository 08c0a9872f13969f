"""The relay handlers the hook worker process runs map each batch's ATIF events at the
batch's flush, so a session's final write (which ``finalize`` waits for) has little left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wayline.plugins.observability.relay.settings import load_settings
from wayline.plugins.observability.relay.worker import build


def test_flush_maps_the_batchs_atif_events_and_the_final_file_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events of an open session wait unmapped until ``flush``, which maps them all and
    writes the ATOF lines; the ATIF written at finalize still has every step."""
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_OUTPUT_DIRECTORY", str(tmp_path / "atof"))
    monkeypatch.setenv("WAYLINE_RELAY_ATOF_FILENAME", "events.jsonl")
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_OUTPUT_DIRECTORY", str(tmp_path / "atif"))
    monkeypatch.setenv("WAYLINE_RELAY_ATIF_FILENAME_TEMPLATE", "t-{session_id}.json")
    handlers = build(load_settings())
    call = handlers.callbacks
    ids = {"session_id": "s1", "platform": "cli", "model": "m"}
    try:
        call["on_session_start"](**ids)
        for n in range(3):
            turn = {**ids, "turn_id": f"t{n}", "api_request_id": f"t{n}:1", "api_call_count": 1}
            call["pre_llm_call"](**turn, user_message=f"question {n}", is_first_turn=n == 0)
            request = {"body": {"model": "m", "messages": [{"role": "user", "content": "q"}]}}
            call["pre_api_request"](**turn, request=request, request_messages=[])
            message = {"role": "assistant", "content": f"answer {n}", "tool_calls": []}
            response = {"model": "m", "finish_reason": "stop", "assistant_message": message}
            call["post_api_request"](**turn, response=response, usage={})
            call["post_llm_call"](**turn, assistant_response=f"answer {n}")
        exporter = handlers.observer.sessions["s1"].atif
        assert exporter.pending_events > 0
        handlers.flush()
        assert exporter.pending_events == 0
        assert (tmp_path / "atof" / "events.jsonl").read_text().count("\n") > 6
        call["on_session_finalize"](**ids)
    finally:
        handlers.close(5.0)
    doc = json.loads((tmp_path / "atif" / "t-s1.json").read_text())
    answers = [s.get("message") for s in doc["steps"] if s["source"] == "agent"]
    assert answers == ["answer 0", "answer 1", "answer 2"]
