"""Clock: a small MCP server for time zones and date arithmetic.

    python clock_server.py

Read-only and offline: it uses the IANA time-zone database through `zoneinfo` (on Windows that
needs the `tzdata` package). Speaks MCP over stdio (both protocol eras, via the SDK's `MCPServer`).
"""

from __future__ import annotations

from datetime import date, datetime
from datetime import time as wall_time
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

mcp = MCPServer(
    "clock",
    version="1.0.0",
    instructions="Tell the time in any IANA time zone, convert times between zones, count days.",
)

# Everything here only reads the clock: safe to call any number of times.
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

TimeZone = Annotated[
    str, Field(description="An IANA time zone name such as 'Europe/Paris', 'America/New_York' or 'UTC'.")
]


class ZonedTime(BaseModel):
    timezone: str
    datetime: str = Field(description="ISO 8601 with the UTC offset.")
    weekday: str
    utc_offset: str = Field(description="Offset from UTC, e.g. '+02:00'.")
    is_dst: bool = Field(description="Whether daylight saving time is in effect.")


class Conversion(BaseModel):
    source: ZonedTime
    target: ZonedTime
    time_difference: str = Field(description="Target offset minus source offset, e.g. '+6h' or '-5.5h'.")


class DayCount(BaseModel):
    days: int = Field(description="end_date minus start_date; negative when end_date comes first.")
    weeks: int = Field(description="Whole weeks in that span.")
    weekdays: int = Field(description="Monday-to-Friday days from start_date (in) to end_date (out).")


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(f"Unknown time zone {name!r}; use an IANA name such as 'Europe/Paris'.") from None


def describe(moment: datetime, name: str) -> ZonedTime:
    offset = moment.utcoffset()
    total = int(offset.total_seconds()) if offset is not None else 0
    sign = "+" if total >= 0 else "-"
    hours, minutes = divmod(abs(total) // 60, 60)
    return ZonedTime(
        timezone=name,
        datetime=moment.isoformat(timespec="seconds"),
        weekday=moment.strftime("%A"),
        utc_offset=f"{sign}{hours:02d}:{minutes:02d}",
        is_dst=bool(moment.dst()),
    )


@mcp.tool(title="Current time", annotations=READ_ONLY)
def current_time(timezone: TimeZone = "UTC") -> ZonedTime:
    """The current date and time in a time zone."""
    return describe(datetime.now(zone(timezone)), timezone)


@mcp.tool(title="Convert a time between zones", annotations=READ_ONLY)
def convert_time(
    time: Annotated[str, Field(description="'HH:MM' (24-hour, today) or ISO 8601 like '2025-03-30T14:00'.")],
    from_tz: TimeZone,
    to_tz: TimeZone,
) -> Conversion:
    """Convert a wall-clock time in one time zone to the same instant in another."""
    source_zone, target_zone = zone(from_tz), zone(to_tz)
    parsed = parse_moment(time, today=datetime.now(source_zone).date())
    # A time written with its own offset names an instant; a plain one is wall-clock time in from_tz.
    source = parsed.astimezone(source_zone) if parsed.tzinfo else parsed.replace(tzinfo=source_zone)
    target = source.astimezone(target_zone)
    source_offset, target_offset = source.utcoffset(), target.utcoffset()
    assert source_offset is not None and target_offset is not None  # aware datetimes
    hours = (target_offset - source_offset).total_seconds() / 3600
    return Conversion(
        source=describe(source, from_tz),
        target=describe(target, to_tz),
        time_difference=f"{hours:+g}h",
    )


def parse_moment(value: str, *, today: date) -> datetime:
    """A date-time from 'HH:MM[:SS]' (meaning today) or an ISO 8601 date-time (offset optional)."""
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        pass
    try:
        return datetime.combine(today, wall_time.fromisoformat(value))
    except ValueError:
        raise ToolError(f"Cannot read {value!r}; use 'HH:MM' or '2025-03-30T14:00'.") from None


@mcp.tool(title="Days between two dates", annotations=READ_ONLY)
def days_between(
    start_date: Annotated[date, Field(description="First date, YYYY-MM-DD.")],
    end_date: Annotated[date, Field(description="Second date, YYYY-MM-DD.")],
) -> DayCount:
    """Count the days, whole weeks and working days (Mon-Fri) from start_date to end_date."""
    days = (end_date - start_date).days
    first, last = sorted((start_date, end_date))
    span = (last - first).days
    full_weeks, rest = divmod(span, 7)
    weekdays = full_weeks * 5 + sum(1 for i in range(rest) if (first.weekday() + i) % 7 < 5)
    return DayCount(days=days, weeks=int(days / 7), weekdays=weekdays if days >= 0 else -weekdays)


if __name__ == "__main__":
    mcp.run()
