from __future__ import annotations

from pathlib import Path

from mcpmanager.core.supervisor.stderr_log import LogLine, StderrLog


def test_lines_split_across_chunks_and_utf8_sequences(tmp_path: Path) -> None:
    log = StderrLog(tmp_path / "s.log")
    data = "héllo wörld\nsecond ✓ line\npartial".encode()
    for i in range(len(data)):  # one byte at a time: every split point, mid-character included
        log.feed(data[i : i + 1])
    assert log.tail(5) == ["héllo wörld", "second ✓ line"]
    log.finish()
    assert log.tail(1) == ["partial"]
    log.close()
    assert (tmp_path / "s.log").read_text(encoding="utf-8").count("\n") == 3


def test_ring_is_bounded_and_escapes_and_secrets_are_removed(tmp_path: Path) -> None:
    log = StderrLog(None, ring_lines=3, secrets=["sk_live_123456", "short"])
    log.feed(b"\x1b[31mred\x1b[0m token=sk_live_123456\nb\nc\nd\n")
    assert log.tail(10) == ["b", "c", "d"]
    assert log.total_lines == 4
    log2 = StderrLog(None, secrets=["sk_live_123456"])
    log2.feed(b"\x1b[31mred\x1b[0m token=sk_live_123456 short\n")
    assert log2.tail(1) == ["red token=*** short"]


def test_log_file_is_capped_by_rotation(tmp_path: Path) -> None:
    path = tmp_path / "flood.log"
    log = StderrLog(path, ring_lines=10, max_bytes=10_000)
    for i in range(5000):
        log.feed(f"flood line {i}\n".encode())
    log.close()
    assert path.stat().st_size <= 10_000 + 200
    assert (tmp_path / "flood.log.1").stat().st_size <= 10_000 + 200
    assert len(log.lines) == 10


def test_listeners_get_batches(tmp_path: Path) -> None:
    log = StderrLog(None)
    batches: list[list[LogLine]] = []
    unsubscribe = log.appended.connect(batches.append)
    log.feed(b"a\nb\nc")
    unsubscribe()
    log.feed(b"\n")
    assert [[line.text for line in batch] for batch in batches] == [["a", "b"]]


def test_a_huge_line_without_newline_is_cut_not_hoarded() -> None:
    log = StderrLog(None)
    log.feed(b"x" * 100_000)
    assert len(log.lines) == 1
    assert log.lines[0].text.endswith("…[cut]")


def test_a_failing_listener_does_not_stop_the_others_or_the_log(tmp_path: Path) -> None:
    log = StderrLog(tmp_path / "s.log")
    seen: list[str] = []

    def broken(batch: list[LogLine]) -> None:
        raise RuntimeError("a pane's bug")

    log.appended.connect(broken)
    log.appended.connect(lambda batch: seen.extend(line.text for line in batch))
    log.feed(b"one\ntwo\n")
    log.close()
    assert seen == ["one", "two"] and log.tail(2) == ["one", "two"]
    assert (tmp_path / "s.log").read_text().count("\n") == 2
