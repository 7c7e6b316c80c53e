"""The search index: the right tool first for plain-language needs, a floor, stable ties, and
incremental updates that give exactly what a rebuild gives."""

from __future__ import annotations

import random
from typing import Any

import pytest

from mcpmanager.core.search import index as index_module  # the module, to patch its FLOOR
from mcpmanager.core.search.index import Hit, SearchDoc, SearchIndex


def tool(name: str, description: str, params: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    properties = {p: {"type": "string", "description": d} for p, d in (params or {}).items()}
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
        **extra,
    }


CATALOGUE: dict[str, list[dict[str, Any]]] = {
    "github": [
        tool(
            "create_issue",
            "Create a new issue in a GitHub repository.",
            {"owner": "", "repo": "", "title": ""},
        ),
        tool("list_pull_requests", "List pull requests of a repository, filtered by state.", {"repo": ""}),
        tool("merge_pull_request", "Merge a pull request.", {"repo": "", "pull_number": "The number"}),
        tool("get_file_contents", "Get the contents of a file or directory from a GitHub repository."),
        tool("search_repositories", "Search for GitHub repositories.", {"query": "Search query"}),
        tool("create_repository", "Create a new GitHub repository in your account."),
    ],
    "filesystem": [
        tool("read_file", "Read the complete contents of a file from the file system.", {"path": "Where"}),
        tool("write_file", "Create a new file or overwrite an existing file with new content.", {"path": ""}),
        tool("list_directory", "Get a detailed listing of all files and directories in a specified path."),
        tool("move_file", "Move or rename files and directories.", {"source": "", "destination": ""}),
        tool("search_files", "Recursively search for files and directories matching a pattern."),
    ],
    "slack": [
        tool("slack_post_message", "Post a new message to a Slack channel.", {"channel_id": "", "text": ""}),
        tool("slack_list_channels", "List public channels in the workspace."),
        tool("slack_get_user_profile", "Get detailed profile information for a specific user."),
    ],
    "kubernetes": [
        tool("list_pods", "List pods in a namespace of the cluster.", {"namespace": ""}),
        tool("delete_pod", "Delete a pod from the cluster.", {"name": "", "namespace": ""}),
        tool("get_pod_logs", "Fetch the logs of a pod container.", {"name": ""}),
    ],
    "calendar": [
        tool(
            "create_event",
            "Create a calendar event or meeting with attendees.",
            {"start": "", "attendees": ""},
        ),
        tool("list_events", "List upcoming calendar events."),
    ],
    "weather": [tool("get_forecast", "Weather forecast for a city: temperature, rain and wind.")],
    "time": [
        tool("get_current_time", "Get the current time in a specific timezone.", {"timezone": "IANA name"}),
        tool("convert_time", "Convert a time between timezones."),
    ],
    "postgres": [tool("run_sql_query", "Run a read-only SQL query against the database.", {"sql": ""})],
}


def docs_of(catalogue: dict[str, list[dict[str, Any]]]) -> list[SearchDoc]:
    return [doc(server, t) for server, tools in catalogue.items() for t in tools]


def doc(server: str, spec: dict[str, Any], exposed: str | None = None) -> SearchDoc:
    return SearchDoc.from_tool(server, spec["name"], exposed or spec["name"], spec)


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    built = SearchIndex()
    built.replace_all(docs_of(CATALOGUE))
    return built


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("open a new issue on a github repository", "github:create_issue"),
        ("show me the open PRs in my repo", "github:list_pull_requests"),
        ("merge this PR", "github:merge_pull_request"),
        ("what is in this folder", "filesystem:list_directory"),
        ("save some text into a file", "filesystem:write_file"),
        ("rename a file", "filesystem:move_file"),
        ("destroy a k8s pod", "kubernetes:delete_pod"),
        ("remove the pod", "kubernetes:delete_pod"),
        ("send a message to a slack channel", "slack:slack_post_message"),
        ("schedule a meeting with Ann on Tuesday", "calendar:create_event"),
        ("will it rain in Paris tomorrow", "weather:get_forecast"),
        ("what time is it now in Tokyo", "time:get_current_time"),
        ("query the db with SQL", "postgres:run_sql_query"),
        ("logs of my pod", "kubernetes:get_pod_logs"),
        ("find repositories about machine learning", "github:search_repositories"),
    ],
)
def test_the_right_tool_comes_first(index: SearchIndex, query: str, expected: str) -> None:
    hits = index.search(query, 5)
    assert hits and hits[0].key == expected, [h.key for h in hits]


def test_results_are_best_first_and_limited(index: SearchIndex) -> None:
    hits = index.search("file", 3)
    assert len(hits) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert index.search("file", 0) == []
    assert len(index) == sum(len(t) for t in CATALOGUE.values())


@pytest.mark.parametrize("query", ["zxqv wplk", "the of and", "", "   ", "?!"])
def test_nonsense_finds_nothing(index: SearchIndex, query: str) -> None:
    assert index.search(query, 5) == []


def test_the_floor_is_relative_to_the_best_possible_score(monkeypatch: pytest.MonkeyPatch) -> None:
    built = SearchIndex(semantic=False)  # BM25F's floor (the semantic side has its own: test_hybrid)
    built.replace_all(docs_of(CATALOGUE))
    query = "erase the pod quickly zxqv wplk frob"  # half the words unknown to the index
    monkeypatch.setattr(index_module, "FLOOR", 0.0)
    found = built.search(query, 5)
    assert found and found[0].key == "kubernetes:delete_pod"
    # Just above the best hit's final score (its name only partly matched, by a synonym): nothing.
    monkeypatch.setattr(index_module, "FLOOR", found[0].score / _best_possible(built, query) * 1.001)
    assert built.search(query, 5) == []
    monkeypatch.setattr(index_module, "FLOOR", found[0].score / _best_possible(built, query) * 0.999)
    assert [h.key for h in built.search(query, 5)] == ["kubernetes:delete_pod"]


def _best_possible(built: SearchIndex, query: str) -> float:
    from mcpmanager.core.search.fields import K1
    from mcpmanager.core.search.postings import idf
    from mcpmanager.core.search.query import build_query
    from mcpmanager.core.search.synonyms import SynonymMap

    own = build_query(query, SynonymMap()).own
    count = len(built)
    return sum(w * idf(built._postings.df(t), count) * (K1 + 1) for t, w in own.items())


def test_fields_weigh_name_over_description_over_parameters() -> None:
    built = SearchIndex()
    built.replace_all(
        [
            doc("s", tool("in_params", "Do a thing.", {"a": "the archive"})),
            doc("s", tool("in_text", "Make an archive of things.")),
            doc("s", tool("archive_mail", "Store mail.")),
        ]
    )
    assert [h.key for h in built.search("archive", 5)] == ["s:archive_mail", "s:in_text", "s:in_params"]


def test_an_expansion_weighs_less_than_the_word_itself() -> None:
    built = SearchIndex()
    built.replace_all(
        [
            doc("s", tool("delete_item", "Takes an item away.")),
            doc("s", tool("remove_item", "Takes an item away.")),
        ]
    )
    assert [h.key for h in built.search("remove an item", 5)] == ["s:remove_item", "s:delete_item"]
    assert [h.key for h in built.search("delete an item", 5)] == ["s:delete_item", "s:remove_item"]
    # The synonym alone is a hint: well under half of what the word itself scores.
    original, expansion = built.search("remove", 5)
    assert (original.key, expansion.key) == ("s:remove_item", "s:delete_item")
    assert expansion.score < 0.5 * original.score


def test_config_synonyms_extend_the_builtin_ones() -> None:
    docs = [doc("s", tool("deploy_app", "Deploy the application."))]
    plain = SearchIndex()
    plain.replace_all(docs)
    assert plain.search("ship it", 5) == []
    extended = SearchIndex({"ship": ["deploy"]})
    extended.replace_all(docs)
    assert [h.key for h in extended.search("ship it", 5)] == ["s:deploy_app"]
    # and the builtin app ↔ application still applies
    assert [h.key for h in extended.search("ship the app", 5)] == ["s:deploy_app"]


def test_ties_are_broken_by_exposed_name_whatever_the_order() -> None:
    same = tool("translate", "Translate text between languages.")
    docs = [doc(server, same, exposed) for server, exposed in (("a", "t_c"), ("b", "t_a"), ("c", "t_b"))]
    for order in (docs, docs[::-1], [docs[1], docs[0], docs[2]]):
        built = SearchIndex()
        built.replace_all(order)
        hits = built.search("translate some text", 5)
        assert [h.key for h in hits] == ["b:translate", "c:translate", "a:translate"]
        assert len({h.score for h in hits}) == 1


def test_from_tool_reads_title_params_and_survives_malformed_specs() -> None:
    spec = tool("t", "Describe.", {"path": "Where"}, annotations={"title": "Nice title"})
    read = SearchDoc.from_tool("srv", "t", "t_exposed", spec)
    assert (read.key, read.title, read.params, read.exposed) == (
        "srv:t",
        "Nice title",
        (("path", "Where"),),
        "t_exposed",
    )
    both = {"name": "t", "title": "Own", "annotations": {"title": "Other"}}
    assert doc("s", both).title == "Own"
    broken = SearchDoc.from_tool("s", "t", "t", {"description": 3, "inputSchema": {"properties": [1, 2]}})
    assert (broken.description, broken.params, broken.title) == ("", (), "")
    odd = SearchDoc.from_tool("s", "t", "t", {"inputSchema": {"properties": {"a": "not a dict"}}})
    assert odd.params == (("a", ""),)


# Incremental updates ----------------------------------------------------------------------------------

QUERIES = [
    "open a new issue",
    "list files in a directory",
    "delete a pod",
    "send a slack message",
    "current time in a timezone",
    "weather forecast",
    "pull request",
    "variant tool number 7",
    "calendar meeting",
]


def _variant(doc: SearchDoc, number: int) -> SearchDoc:
    return SearchDoc(
        doc.key,
        doc.server,
        doc.name,
        doc.exposed,
        doc.title,
        f"{doc.description} variant {number}",
        doc.params,
    )


def _results(built: SearchIndex) -> list[list[Hit]]:
    return [built.search(q, 10) for q in QUERIES]


def _same(a: list[list[Hit]], b: list[list[Hit]]) -> None:
    assert [[h.key for h in hits] for hits in a] == [[h.key for h in hits] for hits in b]
    for hits_a, hits_b in zip(a, b, strict=True):
        for hit_a, hit_b in zip(hits_a, hits_b, strict=True):
            assert hit_a.score == pytest.approx(hit_b.score, rel=1e-12)


@pytest.mark.parametrize("changes", [5, 60, 400])  # few changes stay pending; many force compactions
def test_incremental_updates_equal_a_full_rebuild(changes: int) -> None:
    rng = random.Random(changes)
    base = docs_of(CATALOGUE)
    extra = [
        SearchDoc(f"gen{i}:tool{i}", f"gen{i}", f"tool{i}", f"tool{i}", "", f"Variant tool number {i}.", ())
        for i in range(100)
    ]
    current = {d.key: d for d in base}
    incremental = SearchIndex()
    incremental.replace_all(base)
    for step in range(changes):
        roll = rng.random()
        if roll < 0.4 and current:
            key = rng.choice(sorted(current))
            del current[key]
            incremental.remove(key)
        elif roll < 0.7:
            doc = rng.choice(extra)
            current[doc.key] = doc
            incremental.upsert(doc)
        else:
            doc = _variant(rng.choice(base), step)
            current[doc.key] = doc
            incremental.upsert(doc)
        if step % 7 == 0:
            incremental.search("probe", 3)  # searches in between may compact
    rebuilt = SearchIndex()
    rebuilt.replace_all(current.values())
    assert len(incremental) == len(rebuilt) == len(current)
    _same(_results(incremental), _results(rebuilt))


def test_removed_tools_are_never_returned_and_upsert_replaces() -> None:
    built = SearchIndex()
    built.replace_all(docs_of(CATALOGUE))
    built.remove("kubernetes:delete_pod")
    built.remove("no:such")  # unknown keys are ignored
    assert "kubernetes:delete_pod" not in {h.key for h in built.search("delete a pod", 10)}
    changed = doc("weather", tool("get_forecast", "Tide tables."))
    built.upsert(changed)
    assert "weather:get_forecast" not in {h.key for h in built.search("rain and wind", 10)}  # old text gone
    assert built.search("tide tables", 3)[0].key == "weather:get_forecast"
    assert len(built) == sum(len(t) for t in CATALOGUE.values()) - 1


def test_replace_all_forgets_the_previous_catalogue() -> None:
    built = SearchIndex()
    built.replace_all(docs_of(CATALOGUE))
    built.replace_all([SearchDoc.from_tool("s", "only", "only", tool("only", "Make coffee."))])
    assert len(built) == 1
    assert built.search("delete a pod", 5) == []
    assert [h.key for h in built.search("coffee", 5)] == ["s:only"]
