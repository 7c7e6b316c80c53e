"""A small catalogue of GitHub-like tools with tricky names and parameters, for resolution tests."""

from __future__ import annotations

from typing import Any

STRING = {"type": "string"}


NUMBER = {"type": "integer"}


def schema(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


REPO = {"owner": STRING, "repo": STRING}


TOOLS = [
    {
        "name": "create_issue",
        "description": "Create a new issue in a repository.",
        "inputSchema": schema({**REPO, "title": STRING, "body": STRING}, "owner", "repo", "title"),
    },
    {
        "name": "get_issue",
        "description": "Get one issue.",
        "inputSchema": schema({**REPO, "issue_number": NUMBER}, "owner", "repo", "issue_number"),
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "delete_issue",
        "description": "Delete an issue for good.",
        "inputSchema": schema({**REPO, "issue_number": NUMBER}, "owner", "repo", "issue_number"),
        "annotations": {"destructiveHint": True},
    },
    {
        "name": "search_code",
        "description": "Search code.",
        "inputSchema": schema({"query": STRING, "limit": NUMBER}, "query"),
    },
    {
        "name": "edit_file",
        "description": "Replace a file's content.",
        "inputSchema": schema({"path": STRING, "content": STRING}, "path", "content"),
    },
    {
        "name": "get_weather",
        "description": "Current weather at a place given by coordinates.",
        "inputSchema": schema({"latitude": NUMBER, "longitude": NUMBER}, "latitude", "longitude"),
    },
    {
        "name": "get_weather_by_city",
        "description": "Current weather in a city.",
        "inputSchema": schema({"city": STRING}, "city"),
    },
]
