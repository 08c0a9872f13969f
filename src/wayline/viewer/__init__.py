"""``wayline view``: any ATIF or ATOF trajectory as one self-contained HTML page.

Public API (also for other commands that embed trajectories in a page):

- :func:`load_trajectory` ``(path) -> list[Trajectory]`` — one ATIF ``.json`` (one trajectory)
  or ATOF ``.jsonl`` file (one per root scope); raises :class:`ViewerInputError`.
- :func:`load_trajectories` ``(paths) -> list[Trajectory]`` — files and directories.
- :func:`render_page` ``(trajectories, title=None) -> str`` — the HTML page.
- :func:`write_page` ``(trajectories, out, title=None) -> Path`` — render and write it.
- :func:`trajectory_tree` ``(trajectory) -> rich.tree.Tree`` — the same structure for a terminal.
- :func:`build_view` ``(trajectory) -> dict`` — the JSON the page draws from.
- :func:`page_data` ``(trajectories, title) -> dict`` — what a page embeds (spans as columns);
  :func:`encode_data` / :func:`decode_data` — that data as the page's deflate+base64 text.
"""

from __future__ import annotations

from pathlib import Path

from wayline.contract.private import open_private
from wayline.viewer.load import (
    Trajectory,
    ViewerInputError,
    expand_paths,
    load_trajectories,
    load_trajectory,
)
from wayline.viewer.model import build_view
from wayline.viewer.page import decode_data, embed_json, encode_data, page_data, render_page
from wayline.viewer.tree import trajectory_tree


def write_page(trajectories: list[Trajectory], out: str | Path, title: str | None = None) -> Path:
    """Write :func:`render_page` to ``out`` (parents created) and return its path.

    A new page is 0600 (it holds the conversation), new directories 0700."""
    path = Path(out)
    page = render_page(trajectories, title)
    with open_private(path, "w", encoding="utf-8") as fh:
        fh.write(page)
    return path


__all__ = [
    "Trajectory",
    "ViewerInputError",
    "build_view",
    "decode_data",
    "embed_json",
    "encode_data",
    "expand_paths",
    "load_trajectories",
    "load_trajectory",
    "page_data",
    "render_page",
    "trajectory_tree",
    "write_page",
]
