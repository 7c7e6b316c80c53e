"""Notes: a small MCP server that keeps short notes in a JSON file.

    python notes_server.py

The notes live in `notes.json` under the folder named by the MCPMANAGER_DEMO_DIR environment
variable, or under `mcpmanager-demo` in the system temp folder when it is unset. Speaks MCP over
stdio (both protocol eras, via the SDK's `MCPServer`).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

mcp = MCPServer(
    "notes",
    version="1.0.0",
    instructions="Keep and find short notes. Notes persist between sessions in a local JSON file.",
)


class Note(BaseModel):
    id: int = Field(description="Stable identifier, used by delete_note.")
    title: str
    body: str
    tags: list[str] = Field(default_factory=list)
    created: str = Field(description="Creation time, ISO 8601 in UTC.")


class NoteStore:
    """The notes file. Sync tools run in worker threads, so every read-modify-write holds a lock."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "notes.json"
        self._lock = threading.Lock()

    def _load(self) -> list[Note]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        return [Note.model_validate(item) for item in raw]

    def _save(self, notes: list[Note]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a crash never leaves a half-written file behind.
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps([n.model_dump() for n in notes], indent=1), encoding="utf-8")
        tmp.replace(self.path)

    def all(self) -> list[Note]:
        with self._lock:
            return self._load()

    def add(self, title: str, body: str, tags: list[str]) -> Note:
        with self._lock:
            notes = self._load()
            note = Note(
                id=max((n.id for n in notes), default=0) + 1,
                title=title,
                body=body,
                tags=sorted({t.strip().lower() for t in tags if t.strip()}),
                created=datetime.now(UTC).isoformat(timespec="seconds"),
            )
            self._save([*notes, note])
            return note

    def delete(self, note_id: int) -> Note:
        with self._lock:
            notes = self._load()
            found = next((n for n in notes if n.id == note_id), None)
            if found is None:
                raise ToolError(f"There is no note with id {note_id}.")
            self._save([n for n in notes if n.id != note_id])
            return found


def data_folder() -> Path:
    configured = os.environ.get("MCPMANAGER_DEMO_DIR")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "mcpmanager-demo"


store = NoteStore(data_folder())

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


@mcp.tool(
    title="Add a note",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
)
def add_note(
    title: Annotated[str, Field(min_length=1, description="A short title.")],
    body: Annotated[str, Field(description="The note's text.")] = "",
    tags: Annotated[list[str] | None, Field(description="Optional tags, e.g. ['work', 'ideas'].")] = None,
) -> Note:
    """Save a new note. Returns the stored note with its id."""
    return store.add(title, body, tags or [])


@mcp.tool(title="List notes", annotations=READ_ONLY)
def list_notes(
    tag: Annotated[str | None, Field(description="Only notes with this tag.")] = None,
) -> list[Note]:
    """List saved notes, oldest first, optionally only those with a given tag."""
    notes = store.all()
    return [n for n in notes if tag.lower() in n.tags] if tag else notes


@mcp.tool(title="Search notes", annotations=READ_ONLY)
def search_notes(
    query: Annotated[str, Field(min_length=1, description="Words to look for (case-insensitive).")],
) -> list[Note]:
    """Find notes whose title, text or tags contain every word of the query."""
    words = query.lower().split()
    found = []
    for note in store.all():
        haystack = " ".join([note.title, note.body, *note.tags]).lower()
        if all(word in haystack for word in words):
            found.append(note)
    return found


@mcp.tool(
    title="Delete a note",
    annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    ),
)
def delete_note(
    note_id: Annotated[int, Field(description="The id shown by list_notes or search_notes.")],
) -> Note:
    """Permanently delete one note. Returns the note that was deleted."""
    return store.delete(note_id)


if __name__ == "__main__":
    mcp.run()
