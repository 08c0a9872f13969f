"""Make the OTLP JSON files in ``data/otlp/`` (run by hand, not by pytest).

Each file holds the spans of real third-party instrumentation, encoded by OpenTelemetry's own
OTLP encoder (``opentelemetry-exporter-otlp-proto-common``, what the OTLP exporters send) and
written with protobuf's JSON mapping, one ``ExportTraceServiceRequest`` per line as the
Collector's file exporter writes it:

- ``openinference-openai-agents.jsonl``: the OpenAI Agents SDK (``openai-agents``) running an
  agent with one function tool, traced by Arize's ``openinference-instrumentation-openai-agents``
  (OpenInference attributes: AGENT, LLM and TOOL spans);
- ``genai-openai-v2.jsonl``: the ``openai`` client calling a model twice with a tool call in
  between, traced by ``opentelemetry-instrumentation-openai-v2`` (GenAI semantic conventions,
  message content captured as ``gen_ai.input.messages`` / ``gen_ai.output.messages``).

The model is wayline's scripted server on 127.0.0.1; the packages (pinned below) are installed
into a scratch virtualenv. The scripted answers are ours; every span and attribute is the
instrumentation's.

    .venv/bin/python tests/importers/make_otlp_samples.py [SCRATCH]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from wayline.testing.server import ScriptedServer

OUT = Path(__file__).parent / "data" / "otlp"
PACKAGES = [
    "openai-agents==0.24.0",
    "openinference-instrumentation-openai-agents==2.6.0",
    "opentelemetry-instrumentation-openai-v2==2.4b0",
    "opentelemetry-util-genai==1.1b0",  # the one openai-v2 2.4b0 imports (1.2b0 moved a module)
    "opentelemetry-sdk==1.45.2",
    "opentelemetry-exporter-otlp-proto-common==1.45.2",
    "httpx==0.28.1",  # openai-v2 imports it; openai 3 no longer brings it
]
SCRIPT = {
    "model": "gpt-4o-mini",
    "rules": [
        {
            "name": "weather",
            "match": {"first_user_contains": "weather"},
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
                {"content": "It is sunny in Paris, 21 degrees."},
            ],
        }
    ],
}

# Runs in the scratch virtualenv: the instrumented client, its spans written as OTLP JSON.
CLIENT = r"""
import asyncio, json, sys
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

kind, base_url, out = sys.argv[1:4]
exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": f"sample-{kind}"}))
provider.add_span_processor(SimpleSpanProcessor(exporter))


def weather(city: str) -> str:
    return f"{city}: sunny, 21 C"


if kind == "openinference":
    from agents import (Agent, OpenAIChatCompletionsModel, Runner, function_tool,
                        set_trace_processors)
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])  # no upload to OpenAI's trace service
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    client = AsyncOpenAI(base_url=base_url, api_key="not-a-key")
    agent = Agent(
        name="Weather agent",
        instructions="Answer weather questions with the get_weather tool.",
        model=OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client),
        tools=[function_tool(weather, name_override="get_weather")],
    )
    result = asyncio.run(Runner.run(agent, "What is the weather in Paris?"))
    print(result.final_output)
else:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = OpenAI(base_url=base_url, api_key="not-a-key")
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}]
    messages = [{"role": "system", "content": "Answer weather questions with the tool."},
                {"role": "user", "content": "What is the weather in Paris?"}]
    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    city = json.loads(call.function.arguments)["city"]
    messages.append({"role": "tool", "tool_call_id": call.id, "content": weather(city)})
    second = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    print(second.choices[0].message.content)

provider.force_flush()
request = encode_spans(exporter.get_finished_spans())
with open(out, "w") as handle:
    handle.write(json.dumps(MessageToDict(request)) + "\n")
"""


def main(scratch: Path) -> None:
    """Install the instrumentation into ``scratch`` and write both samples into ``OUT``."""
    venv = scratch / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES], check=True)
    client = scratch / "client.py"
    client.write_text(CLIENT)
    OUT.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    env["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    for kind, name in (
        ("openinference", "openinference-openai-agents.jsonl"),
        ("genai", "genai-openai-v2.jsonl"),
    ):
        with ScriptedServer(SCRIPT) as server:
            subprocess.run(
                [str(python), str(client), kind, server.base_url, str(OUT / name)],
                env=env,
                check=True,
                timeout=300,
            )
        print(OUT / name)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="otlp-")))
