"""``wayline view --tree``: the page's structure as a rich tree in the terminal."""

from __future__ import annotations

import math
from typing import Any

from rich.text import Text
from rich.tree import Tree

from wayline.viewer.load import Trajectory
from wayline.viewer.model import build_view

_COLOURS = {"user": "green", "system": "magenta", "agent": "blue"}


def _short(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.1f} ms" if value < 1000 else f"{value / 1000:.3f} s"


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:,}"


def money(value: float) -> str:
    """A cost with at least two significant digits: ``$0.000012``, ``$0.0123``, ``$1.25``."""
    size = abs(value)
    if size == 0:
        return "$0"
    if size >= 1:
        return f"${value:.2f}"
    digits = min(12, max(4, math.ceil(-math.log10(size)) + 1))
    return f"${value:.{digits}f}"


def _header_line(view: dict[str, Any]) -> Text:
    h = view["h"]
    line = Text()
    line.append(str(h.get("agent") or "?"), style="bold")
    line.append(f" · model {h.get('model') or '–'} · session {h.get('session') or h.get('tid')}")
    line.append(f" · {h['steps']} steps · {_ms(h.get('dur'))}")
    line.append(f" · tokens {_num(h.get('in'))} in / {_num(h.get('out'))} out")
    if h.get("ca") is not None:
        line.append(f" / {_num(h.get('ca'))} cached")
    if h.get("co") is not None:
        line.append(f" · {money(h['co'])}")
    errors = h.get("errors", 0)
    line.append(f" · {errors} errors", style="bold red" if errors else "")
    turns = h.get("turns") or []
    if turns:
        shown = " · ".join(f"{n} {outcome}" for n, outcome in enumerate(turns, start=1))
        line.append(f" · turns: {shown}")
    return line


def _add_trajectory(tree: Tree, view: dict[str, Any]) -> None:
    for step in view["steps"]:
        source = str(step.get("s") or "?")
        label = Text(f"#{step['i']} ", style="bold")
        label.append(source, style=_COLOURS.get(source, "white"))
        if step.get("t") is not None:
            label.append(f" +{_ms(step['t'])}", style="dim")
        if step.get("m"):
            label.append(f"  {_short(step['m'])}")
        if step.get("e"):
            label.append("  error", style="bold red")
        if step.get("cn"):
            label.append("  cancelled", style="bold")
        if step.get("to"):
            how = " (from its steps)" if step.get("ti") else ""
            label.append(f"  turn ended: {step['to']}{how}", style="italic")
        node = tree.add(label)
        if step.get("r"):
            node.add(Text(f"reasoning: {_short(step['r'])}", style="dim italic"))
        for call in step.get("c", []):
            line = Text(f"{call['n']}", style="bold yellow")
            line.append(f" {_short(call['a'], 60)}")
            if call.get("o") is not None:
                line.append(f" → {_short(call['o'], 60)}", style="dim")
            if call.get("e"):
                line.append("  error", style="bold red")
            if call.get("cn"):
                line.append("  cancelled", style="bold")
            call_node = node.add(line)
            _add_rewrite(call_node, call)
            _add_subs(call_node, view, call)
        for orphan in step.get("o", []):
            orphan_node = node.add(Text(f"observation → {_short(orphan['o'], 80)}", style="dim"))
            _add_subs(orphan_node, view, orphan)
    for index in view.get("u", []):
        _add_sub(tree, view["subs"][index])


def _add_rewrite(node: Tree, call: dict[str, Any]) -> None:
    """A rewritten call's executed arguments, what changed, and who changed it and why."""
    if call.get("xa") is not None:
        node.add(Text(f"ran with {_short(call['xa'], 80)}", style="magenta"))
        for change in call.get("dx", []):
            node.add(Text(f"changed {change}", style="magenta"))
    for entry in call.get("mt", []):
        why = f": {entry['why']}" if entry.get("why") is not None else ""
        node.add(Text(f"middleware {entry['who']}{why}", style="magenta"))


def _add_subs(node: Tree, view: dict[str, Any], holder: dict[str, Any]) -> None:
    for index in holder.get("sub", []):
        _add_sub(node, view["subs"][index])
    for name in holder.get("ext", []):
        node.add(Text(f"sub-agent (not embedded): {name}", style="cyan"))


def _add_sub(node: Tree, sub: dict[str, Any]) -> None:
    label = Text("sub-agent ", style="bold cyan")
    label.append_text(_header_line(sub))
    _add_trajectory(node.add(label), sub)


def trajectory_tree(trajectory: Trajectory) -> Tree:
    """A rich :class:`Tree`: header, warnings, steps with tool calls and nested sub-agents."""
    view = build_view(trajectory)
    root = Tree(_header_line(view))
    root.add(Text(f"source {view['src']} ({view['kind']}) · timing: {view['timing']}", "dim"))
    if view["w"]:
        warnings = root.add(Text(f"{len(view['w'])} validation warnings", style="yellow"))
        for line in view["w"]:
            warnings.add(Text(line, style="yellow"))
    if view["h"].get("notes"):
        root.add(Text(f"note: {view['h']['notes']}", style="yellow"))
    _add_trajectory(root, view)
    return root
