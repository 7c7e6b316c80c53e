"""Which calls teach, and the lift: a learned tool rises for a query like the one that found it, and
not for a query about something else."""

from __future__ import annotations

from mcpmanager.core.proxy import learning as learning_module
from mcpmanager.core.proxy.learned import LearnedStore
from mcpmanager.core.proxy.learning import Learning

SESSION = ("connection", 1)
OTHER = ("connection", 2)
# A small shop's tools, as the catalogue's texts (the lift weighs words by their rarity in them).
TEXTS = [
    "refund_payment Return money to the customer for a charge",
    "cancel_subscription Stop a recurring plan",
    "list_orders List the orders of the shop",
    "get_order Get one order by its id",
    "ship_order Mark an order as shipped",
    "list_customers List the customers of the shop",
]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _learning(clock: Clock | None = None) -> Learning:
    learning = Learning(LearnedStore(), clock=clock or Clock())
    learning.catalogue_changed(lambda: TEXTS)
    return learning


def test_a_call_teaches_only_after_a_query_that_showed_the_tool() -> None:
    learning = _learning()
    assert learning.called(SESSION, "shop:refund_payment") is None  # no query before it

    learning.discovered(SESSION, "give a buyer their money back", ["shop:list_orders", "shop:refund_payment"])
    assert learning.called(SESSION, "shop:ship_order") is None  # not among the results
    assert learning.called(OTHER, "shop:refund_payment") is None  # another client's call
    entry = learning.called(SESSION, "shop:refund_payment")

    assert entry is not None and (entry.query, entry.tool, entry.place) == (
        "give a buyer their money back",
        "shop:refund_payment",
        2,
    )
    assert learning.called(SESSION, "shop:refund_payment") is None  # one lesson per query
    assert learning.store.entries()[0].count == 1


def test_a_call_long_after_the_query_teaches_nothing() -> None:
    clock = Clock()
    learning = _learning(clock)
    learning.discovered(SESSION, "give a buyer their money back", ["shop:refund_payment"])
    clock.now = learning_module.RECENT + 1
    assert learning.called(SESSION, "shop:refund_payment") is None


def test_a_name_from_a_did_you_mean_joins_the_query_that_came_before() -> None:
    learning = _learning()
    learning.discovered(SESSION, "give a buyer their money back", ["shop:list_orders"])
    learning.suggested(SESSION, ["shop:refund_payment", "shop:list_orders"])
    entry = learning.called(SESSION, "shop:refund_payment")
    assert entry is not None and entry.query == "give a buyer their money back" and entry.place == 2


def test_a_closed_session_forgets_what_it_was_shown() -> None:
    learning = _learning()
    learning.discovered(SESSION, "give a buyer their money back", ["shop:refund_payment"])
    learning.session_closed(SESSION)
    assert learning.called(SESSION, "shop:refund_payment") is None


def _taught(learning: Learning, query: str, tool: str, times: int = 2) -> None:
    """The user took `tool` for `query`, below the first result."""
    for _ in range(times):
        learning.discovered(SESSION, query, ["shop:list_orders", tool])
        learning.called(SESSION, tool)


# The search's own ranking for the later queries: the refund tool is not among them (the words
# "money back" are not in its text), as with a paraphrase the search cannot bridge.
SEARCH = [("shop:list_orders", 3.0), ("shop:get_order", 2.5), ("shop:list_customers", 1.0)]


def test_the_learned_tool_rises_for_a_similar_query() -> None:
    learning = _learning()
    _taught(learning, "give a buyer their money back", "shop:refund_payment")

    again = learning.rerank("give the buyer their money back", SEARCH, 3)  # the same request again
    assert [key for key, _ in again] == ["shop:refund_payment", "shop:list_orders", "shop:get_order"]
    similar = learning.rerank("give this buyer the money back for order 12", SEARCH, 3)
    assert [key for key, _ in similar] == ["shop:refund_payment", "shop:list_orders", "shop:get_order"]


def test_an_unrelated_query_is_left_as_the_search_ranked_it() -> None:
    learning = _learning()
    _taught(learning, "give a buyer their money back", "shop:refund_payment")

    for query in ("list the customers of the shop", "list the orders of this buyer", "ship it back"):
        ranked = learning.rerank(query, SEARCH, 3)
        assert [key for key, _ in ranked] == [key for key, _ in SEARCH], query


def test_queries_shared_by_two_learned_tools_lift_neither() -> None:
    # Both tools were taken for queries made of the same words: those words do not tell them apart.
    learning = _learning()
    _taught(learning, "stop the customer plan now", "shop:cancel_subscription")
    _taught(learning, "stop the customer plan now", "shop:refund_payment")
    assert learning.lifts("stop the customer plan") == {}


def test_forgetting_takes_the_lift_away() -> None:
    learning = _learning()
    _taught(learning, "give a buyer their money back", "shop:refund_payment")
    learning.store.forget_tool("shop:refund_payment")
    assert learning.rerank("give this buyer the money back", SEARCH, 3) == SEARCH


def test_a_confirmation_weighs_less_than_a_correction() -> None:
    confirmed, corrected = _learning(), _learning()
    for _ in range(2):
        confirmed.discovered(SESSION, "give a buyer their money back", ["shop:refund_payment"])
        confirmed.called(SESSION, "shop:refund_payment")  # the search's first result already
    _taught(corrected, "give a buyer their money back", "shop:refund_payment")
    query = "give this buyer the money back"
    assert confirmed.lifts(query).get("shop:refund_payment", 0.0) < corrected.lifts(query)["shop:refund_payment"]


def test_switched_off_nothing_is_learned_and_nothing_learned_lifts() -> None:
    learning = _learning()
    _taught(learning, "give a buyer their money back", "shop:refund_payment")
    learning.enabled = False  # proxy.learnFromUse: false

    assert learning.rerank("give this buyer the money back", SEARCH, 3) == SEARCH
    learning.discovered(SESSION, "stop the customer plan", ["shop:cancel_subscription"])
    assert learning.called(SESSION, "shop:cancel_subscription") is None
    assert [entry.tool for entry in learning.store.entries()] == ["shop:refund_payment"]  # kept until forgotten

    learning.enabled = True
    assert learning.rerank("give this buyer the money back", SEARCH, 3)[0][0] == "shop:refund_payment"
