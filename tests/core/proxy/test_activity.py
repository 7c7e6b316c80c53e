"""The activity log: a bounded ring of call records, updated in place, with per-tool counters."""

from __future__ import annotations

from mcpmanager.core.proxy.activity import Activity, CallRecord


def test_records_are_updated_in_place_and_observed() -> None:
    activity = Activity(size=10)
    seen: list[CallRecord] = []
    activity.changed.connect(seen.append)
    record = activity.begin("createIssue", "call_tool")
    assert record.outcome == "pending" and not record.resolved
    activity.update(record, server="gh", tool="create_issue", exposed="create_issue", how="normalized")
    done = activity.update(record, outcome="ok", duration=0.25, renames=(("repository", "repo"),))
    assert activity.records() == [done]
    assert done.resolved and done.how == "normalized" and done.renames == (("repository", "repo"),)
    assert [r.outcome for r in seen] == ["pending", "pending", "ok"]
    stats = activity.stats["gh:create_issue"]
    assert (stats.calls, stats.errors, stats.total_time) == (1, 0, 0.25)


def test_the_ring_is_bounded_and_stats_outlive_it() -> None:
    activity = Activity(size=3)
    for number in range(10):
        record = activity.begin(f"t{number}", "direct")
        activity.update(record, server="s", tool="t", outcome="error" if number % 2 else "ok", duration=0.1)
    assert [r.called for r in activity.records()] == ["t7", "t8", "t9"]
    assert len(activity._index) == 3  # the index drops what the ring dropped
    assert activity.stats["s:t"].calls == 10 and activity.stats["s:t"].errors == 5


def test_an_unresolved_call_has_no_tool_and_no_stats() -> None:
    activity = Activity()
    record = activity.begin("send_email", "call_tool")
    failed = activity.update(record, outcome="unknown", detail="Unknown tool 'send_email'.")
    assert failed.duration is not None and failed.duration >= 0
    assert failed.tool is None and not activity.stats
    assert not failed.resolved  # nothing resolved: "make alias" is offered on failed names by the GUI itself
