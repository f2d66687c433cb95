"""The tracing scenario: what a run's span costs (JOBS_OTEL), per run, in this process.

`runs` instant simulated jobs due at once, one `runscheduler --once` in this process with
`workers` threads, in turns: tracing off; on, the spans ending in an SDK processor that
drops them (the span's own cost: the SDK's attributes and context, the batch's read of
the runs' trigger and cause); on, exported over OTLP/HTTP (protobuf) through the SDK's
BatchSpanProcessor to a collector stand-in on loopback (a thread that reads and answers).
Each turn `tries` times, the median reported. The cost per run is the process's CPU time
(every thread's, the exporter's included) per run, less tracing off's.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.conf import settings
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from jobs.bench.executors import _make_jobs
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.executors import SimulatedExecutor
from jobs.models import JobHistory, RunStatus
from jobs.observability import tracing
from jobs.runtime import observed
from jobs.runtime.scheduler import Scheduler


class _Sink(BaseHTTPRequestHandler):
    """A collector stand-in: reads each export, answers 200, counts them."""

    exports = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).exports += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


class _Switch(SpanProcessor):
    """A span processor that hands spans on to the exporting one only while `export` is
    set: one tracer provider per process, three turns."""

    def __init__(self, exporting: Any) -> None:
        self.exporting = exporting
        self.export = False

    def on_end(self, span: Any) -> None:
        if self.export:
            self.exporting.on_end(span)

    def shutdown(self) -> None:
        self.exporting.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporting.force_flush(timeout_millis)


def _set_up_tracing(endpoint: str) -> _Switch:
    exporting = tracing.batch_processor(OTLPSpanExporter(endpoint=endpoint), BatchSpanProcessor)
    switch = _Switch(exporting)
    provider = TracerProvider()
    provider.add_span_processor(switch)
    trace.set_tracer_provider(provider)
    return switch


def _turn(mode: str, runs: int, workers: int, switch: _Switch) -> Result:
    settings.JOBS_OTEL = mode != "off"
    switch.export = mode == "exported"
    observed.forget()
    _make_jobs(runs, "simulated", "true")
    scheduler = Scheduler(
        workers=workers, executor=SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=0)
    )
    cpu, wall = time.process_time(), time.perf_counter()
    scheduler.run_once()
    if switch.export:
        switch.force_flush()  # the export's CPU counts
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    done = JobHistory.objects.filter(status=RunStatus.SUCCESS).count()
    return {
        "tracing": mode,
        "runs": done,
        "wall_s": round(wall, 3),
        "runs_per_s": round(done / wall, 1) if wall else 0.0,
        "cpu_us_per_run": round(cpu / max(done, 1) * 1e6, 1),
    }


def run(runs: int, workers: int, progress: Progress | None = None, *, tries: int = 3) -> Result:
    progress = progress or Progress(silent=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    switch = _set_up_tracing(f"http://127.0.0.1:{server.server_address[1]}/v1/traces")
    modes = ("off", "spans", "exported")
    try:
        for mode in modes:  # warm-up: imports, statement caches
            _turn(mode, min(runs, 200), workers, switch)
        turns: dict[str, list[Result]] = {mode: [] for mode in modes}
        for attempt in range(tries):
            for mode in modes:
                progress(f"tracing: {runs:,} runs, tracing {mode} ({attempt + 1}/{tries})")
                turns[mode].append(_turn(mode, runs, workers, switch))
    finally:
        settings.JOBS_OTEL = False
        observed.forget()
        server.shutdown()
    rows = [sorted(t, key=lambda row: row["cpu_us_per_run"])[tries // 2] for t in turns.values()]
    for row in rows:
        row["overhead_us_per_run"] = round(row["cpu_us_per_run"] - rows[0]["cpu_us_per_run"], 1)
    return {"workers": workers, "exports": _Sink.exports, "per_run": rows}
