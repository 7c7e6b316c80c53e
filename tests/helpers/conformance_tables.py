"""What the conformance fixture serves, as data: its media (built here, not pasted as base64), the
elicitation forms the suite checks field by field, its resources, template, prompts, completions,
and the in-memory event store that lets a Streamable HTTP client resume a stream (SEP-1699)."""

from __future__ import annotations

import io
import struct
import wave
import zlib
from base64 import b64encode
from itertools import count
from typing import Any

import mcp_types as types
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.shared.uri_template import UriTemplate
from mcp_types import JSONRPCMessage

EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


# -- media ----------------------------------------------------------------------------------------
# Built here rather than pasted as opaque base64, so what they contain is plain to see.


def _png_1x1_red() -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte 0, then one red pixel
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return b64encode(png).decode()


def _wav_silence() -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 80)  # 10 ms of silence
    return b64encode(buffer.getvalue()).decode()


PNG = _png_1x1_red()
WAV = _wav_silence()


def text(value: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)], is_error=is_error)


def string_schema(**properties: str) -> dict[str, Any]:
    """An object schema whose properties (name=description) are all required strings."""
    props = {name: {"type": "string", "description": doc} for name, doc in properties.items()}
    return {"type": "object", "properties": props, "required": list(properties)}


# -- elicitation schemas (scenarios tools-call-elicitation, elicitation-sep1034/1330) --------------

USER_FORM = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

DEFAULTS_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


def _titled(values: list[str], titles: list[str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in zip(values, titles, strict=True)]


ENUMS_FORM = {
    "type": "object",
    "properties": {
        # The five enum shapes of SEP-1330, one field each; the suite checks each shape exactly.
        "untitledSingle": {"type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "description": "Pick one (titled)",
            "oneOf": _titled(["value1", "value2", "value3"], ["First Option", "Second Option", "Third Option"]),
        },
        "legacyEnum": {
            "type": "string",
            "description": "Pick one (legacy enumNames)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Pick several",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Pick several (titled)",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": _titled(["value1", "value2", "value3"], ["First Choice", "Second Choice", "Third Choice"])
            },
        },
    },
    "required": [],
}

# SEP-1613 and SEP-2106 (scenario json-schema-2020-12): the dialect, `$defs` with an `$anchor`,
# composition (allOf/anyOf) and conditionals (if/then/else) must pass through untouched.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def custom_header_schema() -> dict[str, Any]:
    """A string argument a 2026-07-28 client also sends as the `Mcp-Param-Region` header (SEP-2243)."""
    region = {"type": "string", "description": "Where to run", "x-mcp-header": "Region"}
    return {"type": "object", "properties": {"region": region}, "required": ["region"]}


# -- resources and prompts ------------------------------------------------------------------------

STATIC_TEXT = "test://static-text"
STATIC_BINARY = "test://static-binary"
WATCHED = "test://watched-resource"
TEMPLATE = UriTemplate.parse("test://template/{id}/data")

RESOURCES = [
    types.Resource(uri=STATIC_TEXT, name="static-text", description="A static text resource", mime_type="text/plain"),
    types.Resource(
        uri=STATIC_BINARY, name="static-binary", description="A static binary resource (PNG)", mime_type="image/png"
    ),
    types.Resource(
        uri=WATCHED, name="watched-resource", description="A resource to subscribe to", mime_type="text/plain"
    ),
]

PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A simple prompt without arguments"),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two required arguments",
        arguments=[
            types.PromptArgument(name="arg1", description="First test argument", required=True),
            types.PromptArgument(name="arg2", description="Second test argument", required=True),
        ],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt embedding a resource",
        arguments=[types.PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)],
    ),
    types.Prompt(name="test_prompt_with_image", description="A prompt with image content"),
]

# Completion candidates by prompt (or template) and argument; filtered by the typed prefix.
COMPLETIONS: dict[tuple[str, str], list[str]] = {
    ("test_prompt_with_arguments", "arg1"): ["paris", "park", "party", "test"],
    ("test_prompt_with_arguments", "arg2"): ["london", "lisbon", "test"],
    ("test_prompt_with_embedded_resource", "resourceUri"): [STATIC_TEXT, STATIC_BINARY, WATCHED],
    ("test://template/{id}/data", "id"): ["1", "2", "3", "123"],
}


def user_message(content: types.ContentBlock) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=content)


class MemoryEventStore(EventStore):
    """Keeps every SSE event so a client that lost a stream can resume it with Last-Event-ID.

    Only needed for `test_reconnection` (SEP-1699): with an event store the SDK sends priming
    events and offers `close_sse_stream`. Grows without bound, which is fine for a test fixture.
    """

    def __init__(self) -> None:
        self._ids = count(1)
        self._events: dict[EventId, tuple[StreamId, JSONRPCMessage | None]] = {}

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = str(next(self._ids))
        self._events[event_id] = (stream_id, message)
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        if last_event_id not in self._events:
            return None
        stream_id = self._events[last_event_id][0]
        after = int(last_event_id)
        # dicts keep insertion order, which is event-id order here.
        for event_id, (stream, message) in self._events.items():
            if int(event_id) > after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id
