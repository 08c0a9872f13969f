"""A process that keeps one core busy part of the time: ``busy`` seconds on, ``idle`` off.

``bench/session.py`` runs the plain session next to it to show what background CPU in
*another process* costs the agent on this machine (the observability plugins' hook worker
process is such a process).

    .venv/bin/python -m bench.burner 0.007 0.013
"""

from __future__ import annotations

import sys
import time


def main() -> None:
    """Alternate a busy loop and a sleep until killed."""
    busy, idle = float(sys.argv[1]), float(sys.argv[2])
    while True:
        until = time.perf_counter() + busy
        while time.perf_counter() < until:
            pass
        time.sleep(idle)


if __name__ == "__main__":
    main()
