"""One OpenTelemetry SDK tracer provider for the test process, exporting to memory.

OpenTelemetry lets a process set its global provider once; every test that reads spans
shares this one and clears its exporter first (the `spans` fixture).
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPORTER = InMemorySpanExporter()
_provider: TracerProvider | None = None


def provider() -> TracerProvider:
    global _provider
    if _provider is None:
        _provider = TracerProvider()
        _provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(_provider)
    return _provider
