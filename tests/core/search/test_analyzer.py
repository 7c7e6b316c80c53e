"""The search analyzer: identifiers split, words stemmed, noise dropped, queries bounded."""

from __future__ import annotations

import random
import string
import time

import pytest

from mcpmanager.core.search.analyzer import MAX_QUERY_TERMS, analyze, analyze_query, terms
from mcpmanager.core.search.stemmer import stem
from mcpmanager.core.search.synonyms import SynonymMap


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("get_pull_request", ["get", "pull", "request"]),
        ("listFiles", ["list", "fil"]),
        ("getHTTPResponse", ["get", "http", "respons"]),
        ("resource-group", ["resourc", "group"]),
        ("cosmos.db/query", ["cosmo", "db", "queri"]),
        ("math.factorial", ["math", "factorial"]),
        ("github__create_issue", ["github", "creat", "issu"]),
        ("UPPER_CASE_NAME", ["upper", "cas", "nam"]),
    ],
)
def test_names_are_split_on_every_separator_and_case_change(text: str, words: list[str]) -> None:
    assert terms(text) == words


def test_a_camel_case_token_is_also_kept_whole() -> None:
    analyzed = analyze("Show my MySQL servers on GitHub")
    assert "sql" in analyzed.words and "mysql" in analyzed.wholes
    assert {"git", "hub"} <= set(analyzed.words) and "github" in analyzed.wholes


def test_adjacent_words_are_joined_so_compounds_meet() -> None:
    assert "usernam" in analyze("the user name of the account").pairs
    assert stem("username") == "usernam"
    assert "knowledgebas" in analyze("knowledge bases").pairs  # plural of the joined form too
    numbered = analyze("top 10 results")
    assert "10" in numbered.words and numbered.pairs == ()  # numbers make no compounds


@pytest.mark.parametrize(
    "forms",
    [
        ("repository", "repositories"),
        ("query", "queries", "querying", "queried"),
        ("create", "creates", "created", "creating", "creation", "creator"),
        ("delete", "deleted", "deleting", "deletion"),
        ("file", "files", "filing"),
        ("list", "lists", "listed", "listing"),
        ("run", "running"),
        ("set", "settings", "setting"),
        ("match", "matches"),
        ("process", "processes"),
        ("database", "databases"),
        ("summarize", "summarizes", "summarizer", "summarization", "summarise"),
        ("deploy", "deployment", "deployments"),
        ("status", "statuses"),
        ("alias", "aliases"),
        ("api", "apis"),
        ("add", "adding", "added"),
        ("install", "installing"),
    ],
)
def test_inflections_meet(forms: tuple[str, ...]) -> None:
    assert len({stem(f) for f in forms}) == 1, {f: stem(f) for f in forms}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("customer", "custom"),
        ("container", "contain"),
        ("news", "new"),
        ("string", "str"),
        ("user", "use"),
        ("analysis", "analys"),
        ("need", "ne"),
        ("speed", "spe"),
    ],
)
def test_unrelated_words_stay_apart(a: str, b: str) -> None:
    assert stem(a) != stem(b)


def test_stop_words_and_request_politeness_are_dropped_numbers_kept() -> None:
    assert terms("Could you please show me all of the files in 2024?") == ["show", "fil", "2024"]
    assert terms("Use this tool to get the weather") == ["get", "weather"]
    assert terms("the a an of") == []


def test_markup_is_stripped_but_placeholders_kept() -> None:
    text = "<p>Delete a <b>file</b> &amp; its <a href='x'>link</a></p> in [docs](https://a/x) <service-name>"
    assert terms(text) == ["delet", "fil", "link", "doc", "servic", "nam"]
    assert terms("<TD>Remove</TD> <BR/>") == ["remov"]
    assert terms("<Ask the host to uninstall the CLI>") == ["ask", "host", "uninstall", "cli"]  # not a tag


def test_acronym_plurals_are_not_split() -> None:
    assert terms("open PRs, URLs and getIDs") == ["open", "pr", "url", "get", "id"]


def test_cjk_text_becomes_character_pairs_and_accents_are_folded() -> None:
    assert terms("搜索关键词") == ["搜索", "索关", "关键", "键词"]
    assert terms("Café résumé") == terms("cafe resume")


def test_query_terms_are_deduplicated_in_order_and_capped() -> None:
    assert analyze_query("files FILES file, folders").words == ("fil", "folder")
    many = " ".join(f"word{i}" for i in range(500))
    assert len(analyze_query(many).words) == MAX_QUERY_TERMS


def test_a_pasted_blob_costs_little() -> None:
    alphabet = string.ascii_letters + string.digits + "+/"
    blob = "decode this image: " + "".join(random.Random(4).choices(alphabet, k=1_000_000))
    start = time.perf_counter()
    analyzed = analyze_query(blob)
    assert time.perf_counter() - start < 0.05
    assert analyzed.words == ("decod", "imag")


def test_builtin_synonyms_expand_both_ways_and_phrases() -> None:
    synonyms = SynonymMap()
    assert ("repositori",) in {e.words for e in synonyms.expand(terms("my repo"))}
    assert ("repo",) in {e.words for e in synonyms.expand(terms("repository"))}
    assert ("pull", "request") in {e.words for e in synonyms.expand(terms("open PRs"))}
    assert ("pr",) in {e.words for e in synonyms.expand(terms("the pull request"))}
    assert ("pr",) not in {e.words for e in synonyms.expand(["request", "pull"])}  # a phrase is in order


def test_config_synonyms_are_added_one_way() -> None:
    synonyms = SynonymMap({"kb": ["knowledge base"], "pr": ["pull", "request"]})
    assert ("knowledg", "bas") in {e.words for e in synonyms.expand(["kb"])}
    assert synonyms.expand(terms("knowledge base")) == []  # one way only
    assert {("pull",), ("request",), ("pull", "request")} <= {e.words for e in synonyms.expand(["pr"])}
    assert "kb" not in SynonymMap() and "kb" in synonyms
