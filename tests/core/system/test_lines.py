"""Line framing: lines split anywhere across chunks come out whole, a line over the cap comes out as
OVERLONG and the next line is intact, and a huge line costs linear time (one join)."""

from __future__ import annotations

import random

from mcpmanager.core.system.lines import LineFramer, Overlong


def frame(chunks: list[bytes], max_line: int | None = None) -> list[bytes | Overlong]:
    framer = LineFramer(max_line)
    lines = [line for chunk in chunks for line in framer.feed(chunk)]
    if (last := framer.rest()) is not None:
        lines.append(last)
    return lines


def test_lines_split_anywhere_come_out_whole() -> None:
    text = b"".join(f'{{"id": {n}, "x": "{"y" * n}"}}\n'.encode() for n in range(200)) + b"tail"
    rng = random.Random(7)
    cuts = sorted(rng.sample(range(1, len(text)), 300))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert frame(chunks) == text.split(b"\n")


def test_a_line_over_the_cap_is_reported_and_the_next_line_is_intact() -> None:
    chunks = [b'{"a": 1}\n', b'{"id": 7, "x": "' + b"x" * 40, b"x" * 40, b"x" * 40 + b'\n{"b": 2}\n', b"y" * 200]
    lines = frame(chunks, max_line=100)
    assert lines[0] == b'{"a": 1}' and lines[2] == b'{"b": 2}'
    assert isinstance(lines[1], Overlong) and lines[1].head.startswith(b'{"id": 7, "x": "xxx')
    assert isinstance(lines[3], Overlong) and lines[3].head == b"y" * 200
    assert frame([b"z" * 101 + b"\nok\n"], max_line=100) == [Overlong(b"z" * 101), b"ok"]
    assert frame([b"z" * 100 + b"\n"], max_line=100) == [b"z" * 100]


def test_a_huge_line_in_small_chunks_is_joined_once() -> None:
    framer = LineFramer()
    chunk = b"x" * 65536
    for _ in range(800):  # 50 MiB: quadratic re-splitting would take minutes
        assert framer.feed(chunk) == []
    [line] = framer.feed(b"\n")
    assert isinstance(line, bytes) and len(line) == 800 * 65536
    assert framer.feed(b"next\n") == [b"next"]  # nothing of it left behind
