"""``wayline serve``'s JSON API over real recordings, through a real server on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from serve_support import Served, wayline_env
from store_support import PRICED, PRICED_TOO, UNPRICED, Recorded, run_wayline

from wayline.serve.charts import fmt_count
from wayline.serve.hub import FRESH_SECONDS
from wayline.viewer import decode_data


def _cli(served_home: Path, *args: str) -> Any:
    """``wayline sessions ARGS --json`` over the same home: what the API must equal."""
    proc = run_wayline("sessions", *args, "--json", home=served_home, cwd=served_home)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _home(served: Served) -> Path:
    return served.log.parent / "home"


def _ids(rows: list[dict[str, Any]]) -> set[str]:
    return {row["session_id"] for row in rows}


def test_list_equals_sessions_list(served: Served, recorded: Recorded) -> None:
    """GET /api/sessions gives the rows `wayline sessions list --json` gives, every session."""
    rows = served.get("/api/sessions?limit=0").json()
    assert rows == _cli(_home(served), "list", "--limit", "0")
    assert _ids(rows) == set(recorded.ids.values())


@pytest.mark.parametrize(
    ("params", "names"),
    [
        ({"status": "failed"}, {"failed"}),
        ({"status": "interrupted"}, {"cancelled"}),
        ({"status": "max_turns"}, {"max_turns"}),
        ({"model": PRICED_TOO}, {"delegate", "child"}),
        ({"model": UNPRICED}, {"failed"}),
        ({"model": "gpt-4o*", "tool": "terminal"}, {"chat"}),
        ({"tool": "boom"}, {"tools"}),
        ({"errors": "1"}, {"tools", "failed"}),
        ({"q": "答案"}, {"tools"}),
        ({"q": "مرحبا بالعالم"}, {"child"}),
        ({"q": "kaput-marker", "status": "completed"}, {"tools"}),
        ({"q": "kaput-marker", "status": "failed"}, set()),
        ({"q": "scratch removed"}, {"chat"}),
        ({"since": "2000-01-01", "until": "2000-01-02"}, set()),
    ],
)
def test_list_filters_and_search(
    served: Served, recorded: Recorded, params: dict[str, str], names: set[str]
) -> None:
    """The list's filters as query parameters, and q= (any script), keep exactly the sessions."""
    rows = served.get("/api/sessions?" + urlencode(params)).json()
    assert _ids(rows) == {recorded.ids[name] for name in names}


def test_limit_and_min_cost(served: Served, recorded: Recorded) -> None:
    """limit= cuts the newest-first list, and min_cost= keeps only priced sessions."""
    everything = served.get("/api/sessions").json()
    assert served.get("/api/sessions?limit=2").json() == everything[:2]
    priced = served.get("/api/sessions?min_cost=0").json()
    assert recorded.ids["failed"] not in _ids(priced)  # unpriced: cost null
    assert all(row["cost_usd"] is not None for row in priced) and priced


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/sessions?status=done", "status"),
        ("/api/sessions?since=yesterdayish", "since"),
        ("/api/sessions?until=", None),
        ("/api/sessions?min_cost=cheap", "min_cost"),
        ("/api/sessions?min_cost=-1", "min_cost"),
        ("/api/sessions?errors=maybe", "errors"),
        ("/api/sessions?limit=-3", "limit"),
        ("/api/sessions?limit=ten", "limit"),
        ("/api/sessions?colour=red", "colour"),
        ("/api/sessions?status=failed&status=completed", "status"),
        ("/api/search?q=", "q"),
        ("/api/search?q=abc&limit=x", "limit"),
        ("/api/stats?by=weather", "by"),
        ("/api/stats?by=model&since=tomorrowish", "since"),
    ],
)
def test_bad_parameters_are_400_naming_the_field(
    served: Served, path: str, field: str | None
) -> None:
    """A bad query parameter is HTTP 400 with a JSON error that names it (an empty one is
    left out, as on the command line)."""
    reply = served.get(path)
    if field is None:
        assert reply.status == 200
        return
    assert reply.status == 400, reply.text
    body = reply.json()
    assert body["field"] == field
    assert body["error"].startswith(f"{field}:")


def test_session_equals_sessions_show(served: Served, recorded: Recorded) -> None:
    """GET /api/sessions/{id} (or a unique prefix) is `wayline sessions show ID --json`."""
    session = recorded.ids["tools"]
    found = served.get(f"/api/sessions/{session}").json()
    assert found == _cli(_home(served), "show", session)
    assert [step["step"] for step in found["steps"]] == [1, 2, 3]
    assert served.get(f"/api/sessions/{session[:-2]}").json()["session"]["session_id"] == session


def test_unknown_and_ambiguous_session(served: Served) -> None:
    """An unknown id is 404 and a prefix several ids share is 400, both naming the id field."""
    missing = served.get("/api/sessions/no-such-session")
    assert missing.status == 404 and missing.json()["field"] == "id"
    ambiguous = served.get("/api/sessions/2")
    assert ambiguous.status == 400 and ambiguous.json()["field"] == "id"
    assert served.get("/api/sessions/no-such-session/events").status == 404


def test_search_equals_sessions_search(served: Served, recorded: Recorded) -> None:
    """GET /api/search?q= is `wayline sessions search TEXT --json` (Chinese, Arabic, ASCII)."""
    for text in ("答案", "مرحبا", "kaput-marker", "ok"):
        rows = served.get("/api/search?" + urlencode({"q": text})).json()
        assert rows == _cli(_home(served), "search", text), text
    hit = served.get("/api/search?q=kaput-marker").json()
    assert {(row["session_id"], row["field"]) for row in hit} == {
        (recorded.ids["tools"], "args:boom"),
        (recorded.ids["tools"], "result:boom"),
    }


@pytest.mark.parametrize("by", ["model", "day", "tool", "status"])
def test_stats_equals_sessions_stats(served: Served, recorded: Recorded, by: str) -> None:
    """GET /api/stats?by= is `wayline sessions stats --by KEY --json`."""
    rows = served.get(f"/api/stats?by={by}").json()
    assert rows == _cli(_home(served), "stats", "--by", by)
    if by != "tool":
        assert sum(row["sessions"] for row in rows) == len(recorded.ids)


def test_stats_totals_equal_final_metrics(served: Served, recorded: Recorded) -> None:
    """Tokens and cost summed over /api/stats equal the sums of the ATIF files' final_metrics."""
    rows = served.get("/api/stats?by=model").json()
    prompt = completion = 0
    cost = 0.0
    for path in recorded.atif_files:
        stack = [json.loads(path.read_text(encoding="utf-8"))]
        while stack:
            document = stack.pop()
            metrics = document.get("final_metrics") or {}
            prompt += metrics.get("total_prompt_tokens") or 0
            completion += metrics.get("total_completion_tokens") or 0
            cost += metrics.get("total_cost_usd") or 0.0
            stack.extend(document.get("subagent_trajectories") or ())
    assert sum(row["input_tokens"] for row in rows) == prompt
    assert sum(row["output_tokens"] for row in rows) == completion
    assert sum(row["cost_usd"] or 0 for row in rows) == pytest.approx(cost)
    by_model = {row["key"]: row for row in rows}
    assert by_model[UNPRICED]["cost_usd"] is None
    assert by_model[PRICED]["sessions"] == 4


def test_session_events_start_with_the_session(served: Served, recorded: Recorded) -> None:
    """The SSE stream of a finished session starts with its row, then all its steps."""
    session = recorded.ids["delegate"]
    detail = served.get(f"/api/sessions/{session}").json()
    events = list(served.events(f"/api/sessions/{session}/events", 2))
    assert events == [("session", detail["session"]), ("steps", detail["steps"])]


def test_live_stream_says_hello(served: Served) -> None:
    """GET /api/live is an event stream that starts with the index's generation."""
    ((name, data),) = list(served.events("/api/live", 1))
    assert name == "hello" and isinstance(data["generation"], int)


def test_pages_list_session_view_and_diff(served: Served, recorded: Recorded) -> None:
    """The list page carries its charts; a session's viewer page embeds that session; the diff
    page compares two sessions by id."""
    listed = served.get("/")
    assert listed.status == 200 and "content-security-policy" in {k.lower() for k in listed.headers}
    assert listed.text.count("<svg") == 9 and "Cost by model" in listed.text
    assert PRICED_TOO in listed.text  # a label of the by-model charts
    session = recorded.ids["tools"]
    assert served.get(f"/sessions/{session}").status == 200
    view = served.get(f"/sessions/{session}/view").text
    data = view.split('id="wl-data" data-encoding="deflate-base64">', 1)[1].split("<", 1)[0]
    assert [item["title"] for item in decode_data(data)["items"]] == [session]
    other = recorded.ids["max_turns"]
    diff = served.get(f"/diff?a={session}&b={other}")
    assert diff.status == 200
    assert f"session {session} → session {other}" in diff.text and "difference" in diff.text
    assert served.get(f"/diff?a={session}").json()["field"] == "b"


def test_path_traversal_is_not_served(served: Served) -> None:
    """Paths that climb out of the app (raw or percent-encoded) reach no file."""
    for path in (
        "/../../../../etc/passwd",
        "/sessions/..%2F..%2F..%2Fetc%2Fpasswd/view",
        "/api/sessions/..%2F..%2Fetc%2Fpasswd",
        "/sessions/%2e%2e/%2e%2e/etc/passwd",
        "/static/../../etc/passwd",
    ):
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
        connection.request("GET", path)
        answer = connection.getresponse()
        body = answer.read().decode("utf-8", "replace")
        connection.close()
        assert answer.status in (400, 404), (path, answer.status)
        assert "root:" not in body


def test_a_linked_file_outside_the_paths_is_not_served(recorded: Recorded, tmp_path: Path) -> None:
    """A session whose file is a symbolic link leading out of the served folder is in no
    answer (list, search, detail, viewer, diff, stats, the charts), while the session beside
    it is in all of them."""
    served_dir, outside = tmp_path / "served", tmp_path / "outside"
    served_dir.mkdir()
    outside.mkdir()
    inside_file, outside_file = _single_session_files(recorded)[:2]
    shutil.copy(inside_file, served_dir / inside_file.name)
    shutil.copy(outside_file, outside / outside_file.name)
    (served_dir / "linked.json").symlink_to(outside / outside_file.name)
    inside_id = json.loads(inside_file.read_text())["session_id"]
    outside_id = json.loads(outside_file.read_text())["session_id"]
    server = Served(served_dir, home=tmp_path / "home", cwd=tmp_path)
    try:
        assert _ids(server.get("/api/sessions?limit=0").json()) == {inside_id}
        assert server.get(f"/api/sessions/{outside_id}").status == 404
        assert server.get(f"/sessions/{outside_id}/view").status == 404
        assert server.get(f"/diff?a={inside_id}&b={outside_id}").status == 400
        assert server.get(f"/sessions/{inside_id}/view").status == 200
        for by in ("model", "day", "status"):
            rows = server.get(f"/api/stats?by={by}").json()
            assert sum(row["sessions"] for row in rows) == 1, (by, rows)
        inside = server.get(f"/api/sessions/{inside_id}").json()["session"]
        assert sum(row["steps"] for row in server.get("/api/stats").json()) == inside["steps"]
        tokens = f"{inside['model']} input: {fmt_count(inside['input_tokens'])}</title>"
        assert tokens in server.get("/").text  # the charts: the inside session's tokens alone
    finally:
        server.stop()


def test_a_foreign_host_header_is_refused(served: Served) -> None:
    """Served on loopback, a request naming another host (DNS rebinding) is refused."""
    assert served.get("/api/sessions", headers={"Host": "attacker.example"}).status == 421
    assert served.get("/api/sessions", headers={"Host": "localhost:1"}).status == 200


def _single_session_files(recorded: Recorded) -> list[Path]:
    """The recorded ATIF files that hold one session each with token counts (not the
    delegation, whose file embeds its child, nor a session that failed before any usage):
    which file sorts first depends on the session ids of the run."""
    return [
        path
        for path in recorded.atif_files
        if "subagent_trajectory_ref" not in path.read_text()
        and (json.loads(path.read_text()).get("final_metrics") or {}).get("total_prompt_tokens")
    ]


def _fresh_window_after(changed: float) -> None:
    """Wait out the documented window after a change made at ``changed`` (monotonic)."""
    while time.monotonic() - changed < FRESH_SECONDS:
        time.sleep(0.05)


def test_deleted_and_rewritten_files_show_within_the_fresh_window(
    recorded: Recorded, tmp_path: Path
) -> None:
    """A session file deleted, or rewritten with a new model, is reflected in the first
    answer to a request made FRESH_SECONDS after the change (stats and charts too)."""
    folder = tmp_path / "atif"
    shutil.copytree(recorded.home / "relay" / "atif", folder)
    server = Served(folder, home=tmp_path / "home", cwd=tmp_path)
    try:
        before = _ids(server.get("/api/sessions?limit=0").json())
        assert "rewritten-model" not in server.get("/").text  # charts kept for this index
        victim = folder / f"wayline-atif-{recorded.ids['failed']}.json"
        victim.unlink()
        _fresh_window_after(time.monotonic())
        assert _ids(server.get("/api/sessions?limit=0").json()) == before - {recorded.ids["failed"]}
        rewritten = folder / f"wayline-atif-{recorded.ids['chat']}.json"
        document = json.loads(rewritten.read_text())
        document["agent"]["model_name"] = "rewritten-model"
        rewritten.write_text(json.dumps(document))
        _fresh_window_after(time.monotonic())
        assert "rewritten-model" in server.get("/").text
        rows = server.get("/api/sessions?model=rewritten-model").json()
        assert _ids(rows) == {recorded.ids["chat"]}
        stats = {row["key"]: row["sessions"] for row in server.get("/api/stats?by=model").json()}
        assert stats["rewritten-model"] == 1
    finally:
        server.stop()


def test_an_index_another_command_updated_is_seen(recorded: Recorded, tmp_path: Path) -> None:
    """A file that `wayline sessions` indexed into the server's index first (so the server's
    own update finds nothing new) still shows in the server's stats within the window."""
    folder = tmp_path / "atif"
    folder.mkdir()
    first, second = _single_session_files(recorded)[:2]
    shutil.copy(first, folder / first.name)
    server = Served(folder, home=tmp_path / "home", cwd=tmp_path)
    try:
        assert sum(row["sessions"] for row in server.get("/api/stats?by=status").json()) == 1
        shutil.copy(second, folder / second.name)
        changed = time.monotonic()
        proc = run_wayline("sessions", "list", str(folder), home=tmp_path / "home", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        _fresh_window_after(changed)
        assert sum(row["sessions"] for row in server.get("/api/stats?by=status").json()) == 2
    finally:
        server.stop()


def test_a_remote_host_needs_allow_remote(tmp_path: Path) -> None:
    """A non-loopback --host without --allow-remote is one error line and exit status 2."""
    proc = subprocess.run(
        [sys.executable, "-m", "wayline", "serve", "--host", "0.0.0.0", "--port", "0"],
        env=wayline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [proc.stderr.strip()]
    assert proc.stderr.startswith("error: --host 0.0.0.0: not a loopback address")
    assert "--allow-remote" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("no/such/folder",),
        ("--port", "{taken}"),
    ],
)
def test_bad_paths_and_taken_ports_are_one_error_line(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """A missing PATH or a port in use ends `wayline serve` with one error line, exit 2."""
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        taken = str(holder.getsockname()[1])
        proc = subprocess.run(
            [sys.executable, "-m", "wayline", "serve", *(a.format(taken=taken) for a in args)],
            env=wayline_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,
        )
    assert proc.returncode == 2, proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("error:")] == [
        proc.stderr.strip().splitlines()[-1]
    ]
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_starlette_says_how_to_install(tmp_path: Path) -> None:
    """Without Starlette installed, `wayline serve` says to install wayline[serve] (exit 2)."""
    code = (
        "import sys; sys.modules['starlette'] = None\n"
        "from wayline.cli.main import main\nmain(['serve'])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=wayline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: wayline serve needs starlette: pip install 'wayline[serve]'"
    )


def test_diff_page_shows_values_redacted(tmp_path: Path) -> None:
    """The diff of two foreign sessions whose tool results hold different secrets shows the
    difference with neither secret."""
    from store_support import harbor_trajectory

    folder = tmp_path / "runs"
    folder.mkdir()
    secrets = (
        "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "sk-" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0",
    )
    for number, secret in enumerate(secrets):
        document = harbor_trajectory(secret)
        document["session_id"] = f"harbor-run-{number}"
        (folder / f"run-{number}.json").write_text(json.dumps(document))
    server = Served(folder, home=tmp_path / "home", cwd=tmp_path)
    try:
        page = server.get("/diff?a=harbor-run-0&b=harbor-run-1")
        view = server.get("/sessions/harbor-run-0/view")
    finally:
        server.stop()
    assert page.status == 200 and "1 difference" in page.text
    assert "step 3 of main, tool call c1 (bash)" in page.text
    assert page.text.count("API_TOKEN=&lt;redacted&gt;") == 2
    for secret in secrets:
        assert secret not in page.text and secret not in view.text
    assert server.proc.returncode == 0  # SIGINT stops it cleanly
