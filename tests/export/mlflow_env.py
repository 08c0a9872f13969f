"""An MLflow tracking server in its own virtualenv, on loopback, for the OTLP export test.

MLflow (3.6 and later) takes OTLP/HTTP traces at ``/v1/traces`` and files them under the
experiment named by the ``x-mlflow-experiment-id`` header. It never goes into the project's
``.venv``: it gets ``.venv-mlflow/`` at the repo root (gitignored), made on first use with
``tests/side_venv.py`` and reused while its stamp names the pinned version.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from side_venv import make_venv, pip_install

MLFLOW_VERSION = "3.17.2"
REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-mlflow"
START_TIMEOUT_S = 120.0

# Read traces back with MLflow's own client, in MLflow's venv: spans as plain JSON.
READ_SPANS = """
import json, sys
import mlflow
mlflow.set_tracking_uri(sys.argv[1])
out = []
for trace in mlflow.search_traces(locations=[sys.argv[2]], return_type="list"):
    for span in trace.data.spans:
        out.append({"trace_id": trace.info.trace_id, "name": span.name, "span_id": span.span_id,
                    "parent_id": span.parent_id, "attributes": span.attributes})
print(json.dumps(out, default=str))
"""


def ensure_venv(venv: Path = VENV) -> Path:
    """The venv's python, installing the pinned MLflow on first use (serialised by a lock)."""
    stamp = venv / ".wayline-mlflow.json"
    with open(REPO / ".venv-mlflow.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if json.loads(stamp.read_text()).get("version") == MLFLOW_VERSION:
                return venv / "bin" / "python"
        except (OSError, ValueError):
            pass
        python = make_venv(venv)
        pip_install(python, f"mlflow=={MLFLOW_VERSION}")
        stamp.write_text(json.dumps({"version": MLFLOW_VERSION}))
        return python


def free_port() -> int:
    """A TCP port nothing listens on right now (127.0.0.1)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class MlflowServer:
    """A running ``mlflow server`` (its own process group: it starts workers)."""

    process: subprocess.Popen[bytes]
    python: Path
    port: int
    workdir: Path

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """POST JSON to the REST API; the JSON answer."""
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as resp:
            return json.loads(resp.read())

    def spans(self, experiment_id: str) -> list[dict[str, Any]]:
        """Every span stored under the experiment, read with MLflow's client."""
        proc = subprocess.run(
            [str(self.python), "-c", READ_SPANS, self.url, experiment_id],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return list(json.loads(proc.stdout.strip().splitlines()[-1]))

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after 15 s."""
        if self.process.poll() is not None:
            return
        group = os.getpgid(self.process.pid)
        os.killpg(group, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            self.process.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)  # workers that outlived the parent


def start(python: Path, workdir: Path) -> MlflowServer:
    """``mlflow server`` with a SQLite store on 127.0.0.1; waits for ``/health``."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = open(workdir / "mlflow.log", "wb")  # noqa: SIM115  # closed with the process
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "OTEL_"))}
    command = [str(python), "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--workers", "1", "--backend-store-uri", f"sqlite:///{workdir / 'mlflow.db'}"]
    command += ["--default-artifact-root", str(workdir / "artifacts")]
    proc = subprocess.Popen(
        command,
        env=env,
        cwd=workdir,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    server = MlflowServer(proc, python, port, workdir)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = (workdir / "mlflow.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"mlflow server exited with {proc.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=2) as resp:
                if resp.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"mlflow server did not answer /health within {START_TIMEOUT_S:.0f} s")


@contextlib.contextmanager
def running(python: Path, workdir: Path) -> Iterator[MlflowServer]:
    """An MLflow server for the duration of a ``with`` block."""
    server = start(python, workdir)
    try:
        yield server
    finally:
        server.stop()
