"""Line framing: lines split anywhere across chunks come out whole, a line over the cap comes out as
OVERLONG and the next line is intact, and a huge line costs linear time (one join)."""

from __future__ import annotations

import random

from mcpmanager.core.system.line_framer import LineFramer, Overlong


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


def test_lines_may_keep_their_newlines_and_the_cap_still_counts_without_it() -> None:
    framer = LineFramer(ends=True)
    assert framer.feed(b'{"a": 1}\n{"b"') == [b'{"a": 1}\n']
    assert framer.feed(b": 2}\n\n") == [b'{"b": 2}\n', b"\n"]
    assert framer.feed(b"tail") == [] and framer.rest() == b"tail"
    whole = b"x" * 50 + b"\n"
    assert LineFramer(ends=True).feed(whole)[0] is whole  # a chunk that is one line is not copied
    assert frame_ends([b"z" * 100 + b"\n"], 100) == [b"z" * 100 + b"\n"]
    assert frame_ends([b"z" * 101 + b"\nok\n"], 100) == [Overlong(b"z" * 101 + b"\n"), b"ok\n"]
    assert frame_ends([b"z" * 60, b"z" * 41, b"\n"], 100) == [Overlong(b"z" * 101 + b"\n")]
    assert frame_ends([b"z" * 100], 100) == [b"z" * 100] and frame_ends([b"z" * 101], 100) == [Overlong(b"z" * 101)]


def frame_ends(chunks: list[bytes], max_line: int) -> list[bytes | Overlong]:
    framer = LineFramer(max_line, ends=True)
    lines = [line for chunk in chunks for line in framer.feed(chunk)]
    if (last := framer.rest()) is not None:
        lines.append(last)
    return lines
