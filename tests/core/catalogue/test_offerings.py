"""Merged prompts, resources and templates: prompt names by the tools' rules, URIs untouched, one
owner per URI (the first server in config order), and where a URI nobody listed is looked for."""

from __future__ import annotations

from typing import Any

from mcpmanager.core.catalogue.offerings import Offerings, ServerOffers


def prompt(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} prompt.", **extra}


def resource(uri: str) -> dict[str, Any]:
    return {"uri": uri, "name": uri.rsplit("/", 1)[-1]}


def template(uri_template: str) -> dict[str, Any]:
    return {"uriTemplate": uri_template, "name": uri_template}


def offerings(**servers: ServerOffers) -> tuple[Offerings, list[frozenset[str]]]:
    merged = Offerings()
    seen: list[frozenset[str]] = []
    merged.changed.connect(seen.append)
    merged.configure(list(servers))
    for name, offers in servers.items():
        merged.set_offers(name, offers)
    return merged, seen


def test_prompt_names_follow_the_tools_rules() -> None:
    merged, _ = offerings(
        github=ServerOffers(prompts=(prompt("review"), prompt("triage issue"))),
        gitlab=ServerOffers(prompts=(prompt("review"),)),
    )
    exposed = {(p.server, p.name): p.exposed for p in merged.prompts()}
    assert exposed == {
        ("github", "review"): "github__review",
        ("gitlab", "review"): "gitlab__review",
        ("github", "triage issue"): "triage_issue",  # valid characters only
    }
    found = merged.prompt("triage_issue")
    assert found is not None and found.name == "triage issue" and found.exposed_spec()["name"] == "triage_issue"
    assert merged.prompt("review") is None  # a clash has no bare name


def test_a_uri_two_servers_list_is_listed_once_for_the_first_in_config_order() -> None:
    shared = "file:///project/README.md"
    merged, _ = offerings(
        docs=ServerOffers(resources=(resource(shared),)),
        files=ServerOffers(resources=(resource(shared), resource("file:///project/setup.py"))),
    )
    listed = {r.uri: (r.server, r.also) for r in merged.resources()}
    assert listed == {shared: ("docs", ("files",)), "file:///project/setup.py": ("files", ())}
    assert merged.servers_for_uri(shared) == ["docs", "files"]

    merged.configure(["files", "docs"])  # the user reordered the config
    assert {r.uri: r.server for r in merged.resources()}[shared] == "files"


def test_a_uri_nobody_listed_goes_to_matching_templates_first_then_to_every_server_with_resources() -> None:
    merged, _ = offerings(
        notes=ServerOffers(resources=(resource("notes://all"),)),
        tickets=ServerOffers(templates=(template("tickets://{project}/{id}"),)),
        tools_only=ServerOffers(),
    )
    assert merged.servers_for_uri("tickets://core/42") == ["tickets", "notes"]
    assert merged.servers_for_uri("notes://all") == ["notes", "tickets"]
    assert merged.servers_for_uri("other://x") == ["notes", "tickets"]  # never a server with no resources


def test_a_broken_template_is_listed_as_written_and_routes_nothing() -> None:
    merged, _ = offerings(odd=ServerOffers(templates=(template("broken://{unclosed"),)))
    assert [t.uri_template for t in merged.templates()] == ["broken://{unclosed"]
    assert merged.template("broken://{unclosed") is not None
    assert merged.servers_for_uri("broken://x") == ["odd"]  # only as a server that has resources


def test_changes_say_which_lists_moved_and_disabled_servers_offer_nothing() -> None:
    merged, seen = offerings(a=ServerOffers(prompts=(prompt("p"),)), b=ServerOffers(resources=(resource("b://1"),)))
    assert seen == [frozenset({"prompts"}), frozenset({"resources"})]
    assert merged.kinds() == {"prompts", "resources"}
    merged.set_offers("a", ServerOffers(prompts=(prompt("p"),)))  # the same again: no news
    assert len(seen) == 2
    merged.configure(["b"])  # `a` disabled
    assert seen[-1] == frozenset({"prompts"}) and merged.prompts() == []
    assert merged.kinds() == {"resources"}
    merged.forget("b")
    assert merged.kinds() == frozenset()
