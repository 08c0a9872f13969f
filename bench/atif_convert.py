"""Benchmark: ATOF -> ATIF conversion cost per event and peak memory at 10k / 100k / 1M events.

Generates synthetic Relay-shaped ATOF files in a temporary directory (sessions of a fixed size:
an agent scope, LLM calls with streamed-chunk marks, tool calls), converts each file in a fresh
child process, and prints per-event cost, peak RSS and the growth over the post-import baseline,
then the 1M/10k ratios. A streaming converter keeps the per-event cost ratio near 1 and the
peak RSS roughly flat (memory follows open scopes and steps, not the event count).

    .venv/bin/python bench/atif_convert.py [--sizes 10000,100000,1000000] [--keep DIR]

Prints numbers only; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TURNS = 20  # LLM calls per session, each followed by one tool call
CHUNKS = 40  # llm.chunk marks per LLM call (streaming)
BASE_NS = 1_795_293_778_000_000_000


def _timestamp(ns: int) -> str:
    seconds, nanos = divmod(ns, 1_000_000_000)
    clock = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{clock}.{nanos:09d}+00:00"


class _Writer:
    def __init__(self) -> None:
        self.clock = BASE_NS
        self.root = str(uuid.uuid4())

    def event(self, kind: str, name: str, uid: str, parent: str, **fields: Any) -> str:
        self.clock += 1_000
        record: dict[str, Any] = {
            "atof_version": "0.1",
            "category": None,
            "category_profile": None,
            "data": None,
            "data_schema": None,
            "kind": kind,
            "metadata": None,
            "name": name,
            "parent_uuid": parent,
            "propagation_root_uuid": self.root,
            "timestamp": _timestamp(self.clock),
            "uuid": uid,
        }
        if kind == "scope":
            record["attributes"] = []
        record.update(fields)
        return json.dumps(record, sort_keys=True, separators=(",", ":"))

    def session(self, index: int) -> Iterator[str]:
        agent = str(uuid.uuid4())
        scope = {"category": "agent", "scope_category": "start"}
        yield self.event("scope", f"agent-{index}", agent, self.root, **scope)
        history: list[dict[str, Any]] = [{"role": "user", "content": f"task {index}"}]
        for turn in range(TURNS):
            llm = str(uuid.uuid4())
            call_id = f"call-{index}-{turn}"
            request = {"content": {"model": "m", "messages": history[-2:]}, "headers": {}}
            profile = {"model_name": "m"}
            yield self.event(
                "scope",
                "openai",
                llm,
                agent,
                category="llm",
                scope_category="start",
                category_profile=profile,
                data=request,
            )
            for chunk in range(CHUNKS):
                yield self.event(
                    "mark",
                    "llm.chunk",
                    str(uuid.uuid4()),
                    llm,
                    data={"chunk_index": chunk, "provider": "unknown"},
                )
            call = {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}
            message = {"role": "assistant", "content": "ok", "tool_calls": [call]}
            usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
            response = {"model": "m", "choices": [{"message": message}], "usage": usage}
            yield self.event(
                "scope",
                "openai",
                llm,
                agent,
                category="llm",
                scope_category="end",
                category_profile=profile,
                data=response,
                metadata={"otel.status_code": "OK"},
            )
            tool = str(uuid.uuid4())
            tool_profile = {"tool_call_id": call_id}
            yield self.event(
                "scope",
                "t",
                tool,
                agent,
                category="tool",
                scope_category="start",
                category_profile=tool_profile,
                data={},
            )
            yield self.event(
                "scope",
                "t",
                tool,
                agent,
                category="tool",
                scope_category="end",
                category_profile=tool_profile,
                data={"ok": turn},
            )
            history.append({"role": "tool", "tool_call_id": call_id, "content": "ok"})
        yield self.event(
            "scope", f"agent-{index}", agent, self.root, category="agent", scope_category="end"
        )


def generate(path: Path, events: int) -> int:
    """Write at least ``events`` events (whole sessions); returns the exact count."""
    writer = _Writer()
    written = 0
    index = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < events:
            lines = list(writer.session(index))
            handle.write("\n".join(lines) + "\n")
            written += len(lines)
            index += 1
    return written


def _rss_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


# A small file is converted this many times per measurement, so that every size is timed
# over about as many events (and seconds) as the largest: a single 0.1 s run would catch a
# fast moment of a VM whose speed drifts, and its best-of would flatter the small size.
EVENTS_PER_MEASUREMENT = 1_000_000


def child(events_path: str, out_dir: str, loops: int = 1) -> None:
    """Convert one file ``loops`` times; print a JSON line with the per-conversion timings
    and the memory of one conversion (runs in a fresh process)."""
    from wayline.relay.atif import convert_file

    # Warm up (lazy imports, first-call caches) outside the timing: at 10k events they would
    # be a visible share of the cost, and that is not a per-event cost.
    with tempfile.TemporaryDirectory() as warm:
        tiny = Path(warm) / "warm.jsonl"
        generate(tiny, 50)
        convert_file(str(tiny), str(Path(warm) / "out"))
    baseline = _rss_kb("VmRSS:")
    started, cpu, times = time.perf_counter(), time.process_time(), os.times()
    for loop in range(loops):
        report = convert_file(events_path, f"{out_dir}-{loop}" if loops > 1 else out_dir)
        if loops > 1:
            shutil.rmtree(f"{out_dir}-{loop}", ignore_errors=True)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    after = os.times()
    result = {
        "events": report.events,
        "files": len(report.written),
        "loops": loops,
        # CPU seconds per conversion: the converter is single-threaded, and CPU time is what
        # it costs without the wall-clock noise of other load on a shared machine.
        "seconds": cpu / loops,
        "wall_seconds": elapsed / loops,
        "user_seconds": (after.user - times.user) / loops,
        "system_seconds": (after.system - times.system) / loops,
        "baseline_kb": baseline,
        "peak_kb": _rss_kb("VmHWM:"),
    }
    print(json.dumps(result))


def _convert(events_path: Path, out_dir: Path, loops: int = 1) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(events_path), str(out_dir), str(loops)],
        capture_output=True,
        text=True,
        check=True,
    )
    shutil.rmtree(out_dir, ignore_errors=True)
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure(
    sizes: list[int],
    repeats: int | list[int] = 1,
    keep: Path | None = None,
    echo: bool = False,
) -> list[dict[str, Any]]:
    """Convert a generated file of each size ``repeats`` times (fresh process each time).

    The sizes take turns, round by round (10k, 100k, 1M, 10k, …), so a slow spell of the
    machine hits all of them rather than one size's runs. Each size's figures are its
    fastest conversion and the peak RSS of that run.
    """
    times = [repeats] * len(sizes) if isinstance(repeats, int) else list(repeats)
    work = keep or Path(tempfile.mkdtemp(prefix="atif-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    try:
        paths = [work / f"events-{size}.jsonl" for size in sizes]
        counts = [generate(path, size) for path, size in zip(paths, sizes, strict=True)]
        runs: list[list[dict[str, Any]]] = [[] for _ in sizes]
        for turn in range(max(times)):
            for index, size in enumerate(sizes):
                if turn < times[index]:
                    loops = max(1, EVENTS_PER_MEASUREMENT // max(size, 1))
                    runs[index].append(_convert(paths[index], work / f"out-{size}", loops))
        for path, count, size_runs in zip(paths, counts, runs, strict=True):
            row = min(size_runs, key=lambda r: float(r["seconds"]))
            row["mb"] = mb = path.stat().st_size / 1e6
            row["us_per_event"] = row["seconds"] / count * 1e6
            row["growth_kb"] = row["peak_kb"] - row["baseline_kb"]
            rows.append(row)
            if echo:
                print(
                    f"{count:>9} events ({mb:7.1f} MB, {row['files']:>5} files): "
                    f"{row['us_per_event']:6.2f} us/event, peak RSS "
                    f"{row['peak_kb'] / 1024:7.1f} MB "
                    f"(+{row['growth_kb'] / 1024:6.1f} MB over baseline)",
                    flush=True,
                )
            if keep is None:
                path.unlink()
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return rows


COST_GOAL = 1.2  # per-event cost at the largest size / at the smallest
GROWTH_GOAL_MB = 16  # peak RSS over the post-import baseline at the largest size


def run(
    sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000), repeats: tuple[int, ...] = (2, 2, 2)
) -> list[dict[str, Any]]:
    """Suite rows: the per-event cost ratio and peak RSS for each size."""
    rows: list[dict[str, Any]] = []
    measured: list[dict[str, Any]] = []
    measured.extend(measure(list(sizes), list(repeats)))
    first, last = measured[0], measured[-1]
    ratio = last["us_per_event"] / first["us_per_event"]
    rows.append(
        {
            "line": "P4",
            "name": f"atif convert: µs/event at {last['events']:,} vs {first['events']:,} events",
            "wayline": round(last["us_per_event"], 2),
            "reference": round(first["us_per_event"], 2),
            "reference_is": f"the same converter at {first['events']:,} events",
            "unit": "µs/event",
            "ratio": round(ratio, 3),
            "goal": f"<= {COST_GOAL}x",
            "passed": ratio <= COST_GOAL,
        }
    )
    for row in measured:
        growth = row["growth_kb"] / 1024
        is_last = row is last
        rows.append(
            {
                "line": "P4",
                "name": f"atif convert: peak RSS at {row['events']:,} events "
                f"({row['mb']:.0f} MB ATOF, {row['files']} files)",
                "wayline": round(row["peak_kb"] / 1024, 1),
                "unit": "MB",
                "goal": f"<= +{GROWTH_GOAL_MB} MB over baseline" if is_last else None,
                "passed": growth <= GROWTH_GOAL_MB if is_last else None,
                "detail": f"+{growth:.1f} MB over the {row['baseline_kb'] / 1024:.1f} MB "
                "post-import baseline",
            }
        )
    return rows


def main() -> None:
    """Run the benchmark for each size and print a table plus the largest/smallest ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=1, help="conversions per size (best)")
    parser.add_argument("--keep", type=Path, default=None, help="keep files in this directory")
    parser.add_argument(
        "--child", nargs=3, metavar=("EVENTS", "OUT", "LOOPS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    rows = measure(sizes, args.repeats, args.keep, echo=True)
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        print(
            f"ratio {last['events']}/{first['events']} events: "
            f"per-event cost x{last['us_per_event'] / first['us_per_event']:.2f}, "
            f"peak RSS x{last['peak_kb'] / first['peak_kb']:.2f}, "
            f"growth over baseline x{max(last['growth_kb'], 1) / max(first['growth_kb'], 1):.2f}"
        )


if __name__ == "__main__":
    main()
