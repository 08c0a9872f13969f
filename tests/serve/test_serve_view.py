"""The viewer page of a session drawn from its own ATOF events (running sessions interleaved
in one shared file), and ``?step=N`` deep links that open a delegated child at its own steps."""

from __future__ import annotations

import http.client
from pathlib import Path

from serve_support import Served
from store_support import Recorded

from wayline.store.atof import RootRouter, parse_event, root_session
from wayline.viewer import decode_data, load_trajectory, render_page

PART = 0.6
"""The share of each session's lines written so far: its turn is still open (running)."""
TORN = b'{"kind": "scope", "scope_category": "start", "uuid": "torn-by-a-kill\n'
"""What a writer killed mid-line leaves before the next writer appends."""
STRAY = b"[1, 2]\n"
"""A line that is JSON but no event: reading the whole file (``wayline view``) stops there;
a session's own lines never include it."""


def _by_session(atof: Path) -> dict[str, list[bytes]]:
    """The recorded ATOF lines of each session's first root, in file order (as the store
    routes them)."""
    router = RootRouter()
    roots: dict[str, list[bytes]] = {}
    for raw in atof.read_bytes().splitlines(keepends=True):
        event = parse_event(raw)
        root = router.route(event) if event is not None else None
        if root is not None:
            roots.setdefault(root, []).append(raw)
    out: dict[str, list[bytes]] = {}
    for lines in roots.values():
        first = parse_event(lines[0])
        session = root_session(first) if first is not None else None
        if session is not None and session not in out:
            out[session] = lines
    return out


def _page_items(html: str) -> list[dict[str, object]]:
    data = html.split('id="wl-data" data-encoding="deflate-base64">', 1)[1].split("<", 1)[0]
    items: list[dict[str, object]] = decode_data(data)["items"]
    return items


def test_running_sessions_interleaved_in_one_file_each_draw_alone(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Two running sessions whose events alternate in one ATOF file (with a line a killed
    writer tore and a stray line no session owns) each get a viewer page of their own steps
    read from their own lines, equal to `wayline view` of a file holding them alone."""
    (atof,) = recorded.atof_files
    lines = _by_session(atof)
    first, second = recorded.ids["tools"], recorded.ids["max_turns"]
    a = lines[first][: max(2, int(len(lines[first]) * PART))]
    b = lines[second][: max(2, int(len(lines[second]) * PART))]
    mixed: list[bytes] = []
    for index in range(max(len(a), len(b))):
        mixed.extend(a[index : index + 1] + b[index : index + 1])
        if index == 3:
            mixed.extend((TORN, STRAY))
    folder = tmp_path / "atof"
    folder.mkdir()
    (folder / "wayline-atof.jsonl").write_bytes(b"".join(mixed))
    alone = tmp_path / "alone"
    alone.mkdir()
    server = Served(folder, home=tmp_path / "home", cwd=tmp_path)
    try:
        rows = {row["session_id"]: row for row in server.get("/api/sessions").json()}
        assert {rows[first]["status"], rows[second]["status"]} == {"running"}
        for session, own in ((first, a), (second, b)):
            reply = server.get(f"/sessions/{session}/view")
            assert reply.status == 200, reply.text
            served = _page_items(reply.text)
            assert [item["title"] for item in served] == [session]
            steps = server.get(f"/api/sessions/{session}").json()["steps"]
            assert len(served[0]["steps"]) == len(steps) > 0  # type: ignore[arg-type]
            only = alone / f"{session}.jsonl"
            only.write_bytes(b"".join(own))
            (expected,) = _page_items(render_page(load_trajectory(only)))
            assert served[0]["steps"] == expected["steps"]
    finally:
        server.stop()


def _location(served: Served, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        return answer.status, answer.getheader("Location") or ""
    finally:
        connection.close()


def test_step_links_find_a_delegated_child_inside_its_parent(
    served: Served, recorded: Recorded
) -> None:
    """?step=N redirects to the viewer's anchor of that session's step N: #step-N for a
    top-level session, #step-1-N for the delegated child drawn inside its parent."""
    child, top = recorded.ids["child"], recorded.ids["tools"]
    assert _location(served, f"/sessions/{child}/view?step=2") == (
        303,
        f"/sessions/{child}/view#step-1-2",
    )
    assert _location(served, f"/sessions/{top}/view?step=3") == (
        303,
        f"/sessions/{top}/view#step-3",
    )
    assert _location(served, f"/sessions/{top[:-2]}/view?step=1")[1].startswith(
        f"/sessions/{top}/view#"
    )
    for bad in ("0", "x", "-1"):
        reply = served.get(f"/sessions/{top}/view?step={bad}")
        assert reply.status == 400 and reply.json()["field"] == "step"
    assert _location(served, "/sessions/no-such-session/view?step=1")[0] == 404
