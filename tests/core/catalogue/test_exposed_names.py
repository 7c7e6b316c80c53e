"""Exposed tool names: valid, unique, stable, and the original name whenever that is possible."""

from __future__ import annotations

import random
import re
import string

import pytest

from mcpmanager.core.catalogue.exposed_names import assign_exposed_names, sanitize, shorten

VALID_64 = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check(names: dict[tuple[str, str], str], max_length: int = 64) -> None:
    """Every name valid and at most max_length long, no two the same."""
    pattern = re.compile(rf"^[A-Za-z0-9_-]{{1,{max_length}}}$")
    for pair, name in names.items():
        assert pattern.match(name), (pair, name)
    assert len(set(names.values())) == len(names), names


# sanitize ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("read_file", "read_file"),
        ("get-issue", "get-issue"),
        ("Mixed_Case-9", "Mixed_Case-9"),
        ("__init__", "__init__"),  # already valid: unchanged
        ("files:read", "files_read"),
        ("fs.read.file", "fs_read_file"),
        ("read file", "read_file"),
        ("a :: b", "a_b"),
        ("a._b", "a_b"),  # the run collapses with the underscore next to it
        (" spaced out ", "spaced_out"),
        (".hidden.", "hidden"),
        ("café", "cafe"),
        ("naïve résumé", "naive_resume"),
        ("日本語_tool", "tool"),
        ("tool→x", "tool_x"),
        ("emoji 🚀 launch", "emoji_launch"),
        ("", "tool"),
        ("...", "tool"),
        ("日本語", "tool"),
    ],
)
def test_sanitize(raw: str, clean: str) -> None:
    assert sanitize(raw) == clean


def test_sanitize_is_idempotent() -> None:
    for raw in ["a.b", "x y z", "café::ouvert", "", "-lead", "ü"]:
        once = sanitize(raw)
        assert sanitize(once) == once
        assert re.fullmatch(r"[A-Za-z0-9_-]+", once)


# shorten -------------------------------------------------------------------------------------------


def test_shorten_leaves_short_names_alone() -> None:
    assert shorten("read_file", "fs:read_file", 64) == "read_file"
    assert shorten("x" * 64, "s:" + "x" * 64, 64) == "x" * 64


def test_shorten_keeps_head_tail_and_a_stable_hash() -> None:
    name = "server_with_a_rather_long_name__fetch_the_complete_list_of_repositories_by_owner_id"
    short = shorten(name, "server_with_a_rather_long_name:fetch_the_complete_list", 64)
    assert len(short) <= 64
    assert short.startswith("server_with")
    assert short.endswith("_by_owner_id")
    assert re.search(r"_[0-9a-f]{6}_", short)
    assert short == shorten(name, "server_with_a_rather_long_name:fetch_the_complete_list", 64)


def test_shorten_distinguishes_by_key() -> None:
    name = "a" * 100
    assert shorten(name, "s1:" + name, 64) != shorten(name, "s2:" + name, 64)


@pytest.mark.parametrize("max_length", [16, 20, 33, 64, 100])
def test_shorten_respects_max_length(max_length: int) -> None:
    for length in range(1, 200, 7):
        name = ("ab_" * 100)[:length].strip("_") or "a"
        short = shorten(name, f"s:{name}", max_length)
        assert len(short) <= max_length
        assert re.fullmatch(r"[A-Za-z0-9_-]+", short)


def test_tiny_max_length_is_refused() -> None:
    with pytest.raises(ValueError):
        shorten("anything", "s:anything", 8)
    with pytest.raises(ValueError):
        assign_exposed_names([("s", "t")], max_length=10)


# assign_exposed_names ------------------------------------------------------------------------------


def test_unique_names_are_unchanged() -> None:
    names = assign_exposed_names([("time", "get_current_time"), ("git", "git_status"), ("fs", "read_file")])
    assert names == {
        ("time", "get_current_time"): "get_current_time",
        ("git", "git_status"): "git_status",
        ("fs", "read_file"): "read_file",
    }


def test_clash_uses_the_server_form_for_every_clashing_tool() -> None:
    names = assign_exposed_names(
        [
            ("filesystem", "read_file"),
            ("desktop-commander", "read_file"),
            ("filesystem", "list_allowed_directories"),
            ("desktop-commander", "start_process"),
        ]
    )
    assert names == {
        ("filesystem", "read_file"): "filesystem__read_file",
        ("desktop-commander", "read_file"): "desktop-commander__read_file",
        ("filesystem", "list_allowed_directories"): "list_allowed_directories",
        ("desktop-commander", "start_process"): "start_process",
    }


def test_three_way_clash() -> None:
    names = assign_exposed_names([("a", "search"), ("b", "search"), ("c", "search"), ("c", "other")])
    assert names[("a", "search")] == "a__search"
    assert names[("b", "search")] == "b__search"
    assert names[("c", "search")] == "c__search"
    assert names[("c", "other")] == "other"


def test_repeated_pairs_are_one_tool() -> None:
    assert assign_exposed_names([("s", "t"), ("s", "t")]) == {("s", "t"): "t"}


def test_empty_input() -> None:
    assert assign_exposed_names([]) == {}


def test_accepts_a_generator() -> None:
    names = assign_exposed_names((s, t) for s, t in [("s", "a.b"), ("s", "c")])
    assert names == {("s", "a.b"): "a_b", ("s", "c"): "c"}


def test_names_are_sanitised() -> None:
    names = assign_exposed_names([("s", "files:read"), ("s", "fs.list"), ("s", "make note"), ("s", "café")])
    assert names == {
        ("s", "files:read"): "files_read",
        ("s", "fs.list"): "fs_list",
        ("s", "make note"): "make_note",
        ("s", "café"): "cafe",
    }


def test_a_server_name_that_needs_sanitising() -> None:
    names = assign_exposed_names([("My Server (v2)", "search"), ("docs.site", "search")])
    assert names == {
        ("My Server (v2)", "search"): "My_Server_v2__search",
        ("docs.site", "search"): "docs_site__search",
    }
    check(names)


def test_collision_made_by_sanitising_keeps_the_real_name() -> None:
    # `a.b` would become `a_b`, which is another server's tool's own name: the real name wins.
    names = assign_exposed_names([("s1", "a.b"), ("s2", "a_b")])
    assert names == {("s1", "a.b"): "s1__a_b", ("s2", "a_b"): "a_b"}


def test_collision_made_by_sanitising_without_a_real_name() -> None:
    names = assign_exposed_names([("s1", "a.b"), ("s2", "a b"), ("s3", "a:b")])
    assert names == {("s1", "a.b"): "s1__a_b", ("s2", "a b"): "s2__a_b", ("s3", "a:b"): "s3__a_b"}


def test_collision_on_one_server_falls_back_to_a_hash() -> None:
    # Same server, so the server form collides too: a hash of `server:tool` tells them apart.
    names = assign_exposed_names([("s", "a.b"), ("s", "a b")])
    check(names)
    assert re.fullmatch(r"s__a_b_[0-9a-f]{6}", names[("s", "a.b")])
    assert re.fullmatch(r"s__a_b_[0-9a-f]{6}", names[("s", "a b")])


def test_server_names_that_sanitise_alike() -> None:
    names = assign_exposed_names([("a.b", "read"), ("a b", "read")])
    check(names)
    assert all(name.startswith("a_b__read_") for name in names.values())


def test_an_original_name_that_looks_like_a_server_form() -> None:
    # `fs__read` is a unique original name on server x; it keeps it, the made-up `fs__read` moves on.
    names = assign_exposed_names([("x", "fs__read"), ("fs", "read"), ("other", "read")])
    check(names)
    assert names[("x", "fs__read")] == "fs__read"
    assert names[("other", "read")] == "other__read"
    assert names[("fs", "read")].startswith("fs__read_")


def test_two_unaltered_server_forms_that_are_equal() -> None:
    # server `a` + tool `b__c` and server `a__b` + tool `c` both make `a__b__c`.
    names = assign_exposed_names([("a", "b__c"), ("a__b", "c"), ("z", "b__c"), ("z", "c")])
    check(names)
    assert names[("z", "b__c")] == "z__b__c"
    assert names[("z", "c")] == "z__c"


def test_hashed_forms_when_the_server_form_is_exactly_max_length() -> None:
    # `s` and `s.` both give the 64-character `s__<tool>`: the hashed form must still be shortened.
    tool = "t" * 61
    names = assign_exposed_names([("s", tool), ("s.", tool)])
    check(names)


def test_pairs_whose_server_tool_key_is_the_same() -> None:
    # `a:` + `b` and `a` + `:b` are both `a::b`, and both sanitise to `a__b` in the server form.
    tools = [("a:", "b"), ("a", ":b"), ("z", "b"), ("z", ":b")]
    names = assign_exposed_names(tools)
    check(names)
    assert names[("z", "b")] == "z__b"
    assert re.fullmatch(r"z__b_[0-9a-f]{6}", names[("z", ":b")])
    assert re.fullmatch(r"a__b_[0-9a-f]{6}", names[("a:", "b")])
    assert re.fullmatch(r"a__b_[0-9a-f]{6}", names[("a", ":b")])


def test_long_names_are_shortened_distinct_and_stable() -> None:
    prefix = "retrieve_the_complete_and_exhaustive_list_of_all_the_"
    tools = [("server", prefix + suffix) for suffix in ("open_issues", "closed_issues", "open_pull_requests")]
    tools += [("other", prefix + "open_issues")]  # a clash, and the server form is long too
    names = assign_exposed_names(tools)
    check(names)
    assert names == assign_exposed_names(list(reversed(tools)))
    assert names[("server", prefix + "closed_issues")].endswith("closed_issues")
    assert names[("server", prefix + "open_pull_requests")].endswith("open_pull_requests")
    assert names[("other", prefix + "open_issues")].startswith("other__")


def test_long_names_that_differ_only_in_the_middle() -> None:
    tools = [("s", "a" * 40 + middle + "z" * 40) for middle in ("x", "y", "xy", "")]
    names = assign_exposed_names(tools)
    check(names)
    assert len(set(names.values())) == 4


def test_a_long_server_name() -> None:
    server = "a-server-whose-name-goes-on-and-on-and-on-well-past-the-limit"
    names = assign_exposed_names([(server, "search"), ("short", "search")])
    check(names)
    assert names[("short", "search")] == "short__search"
    assert names[(server, "search")].endswith("search")


@pytest.mark.parametrize("max_length", [16, 32, 48])
def test_a_smaller_max_length(max_length: int) -> None:
    tools = [("filesystem", "read_multiple_files"), ("desktop-commander", "read_multiple_files")]
    tools += [("github", "create_or_update_file"), ("github", "search_repositories")]
    names = assign_exposed_names(tools, max_length=max_length)
    check(names, max_length)
    assert names == assign_exposed_names(reversed(tools), max_length=max_length)


def test_independent_of_input_order() -> None:
    tools = [
        ("s1", "a.b"),
        ("s2", "a_b"),
        ("s3", "a b"),
        ("s3", "a:b"),
        ("fs", "read_file"),
        ("dc", "read_file"),
        ("x", "fs__read_file"),
        ("long", "q" * 90),
        ("long2", "q" * 90),
    ]
    expected = assign_exposed_names(tools)
    check(expected)
    rng = random.Random(7)
    for _ in range(50):
        shuffled = tools[:]
        rng.shuffle(shuffled)
        assert assign_exposed_names(shuffled) == expected


def test_unrelated_tools_do_not_rename_others() -> None:
    base = [("fs", "read_file"), ("dc", "read_file"), ("time", "get_current_time")]
    before = assign_exposed_names(base)
    after = assign_exposed_names([*base, ("git", "git_status"), ("memory", "create_entities")])
    assert all(after[pair] == name for pair, name in before.items())


# property-style ------------------------------------------------------------------------------------

_ALPHABET = string.ascii_letters + string.digits + "_-" + ".:/ " + "éü日→🚀" + "__..--"


def _random_name(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.1:
        return rng.choice(["", "_", ".", "read_file", "search", "a.b", "a_b", "a b", "s__t"])
    length = rng.choice([1, 2, 3, 5, 8, 13, 30, 63, 64, 65, 90, 150])
    return "".join(rng.choice(_ALPHABET) for _ in range(length))


@pytest.mark.parametrize("seed", range(20))
def test_random_names_are_valid_and_unique(seed: int) -> None:
    rng = random.Random(seed)
    servers = [_random_name(rng) for _ in range(rng.randint(1, 6))] + ["s", "s.", "s_"]
    tools = [(rng.choice(servers), _random_name(rng)) for _ in range(rng.randint(1, 120))]
    # Clashes on purpose: the same tool name on several servers.
    tools += [(server, tools[0][1]) for server in servers]
    names = assign_exposed_names(tools)
    assert set(names) == set(tools)
    for name in names.values():
        assert VALID_64.match(name), name
    assert len(set(names.values())) == len(names)
    shuffled = tools[:]
    rng.shuffle(shuffled)
    assert assign_exposed_names(shuffled) == names


def test_unique_valid_names_survive_in_a_random_catalogue() -> None:
    rng = random.Random(1234)
    tools = [(f"server{rng.randint(0, 9)}", f"tool_{i}") for i in range(300)]
    names = assign_exposed_names(tools)
    assert all(names[pair] == pair[1] for pair in tools)
