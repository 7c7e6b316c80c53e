"""The pure-Python WordPiece tokenizer gives the model's own split: the static vectors are indexed by
these ids. The expected ids are what the model's tokenizer.json (HF `tokenizers`) gives."""

from __future__ import annotations

import pytest

from mcpmanager.core.search.vectors import shipped
from mcpmanager.core.search.wordpiece import WordPiece


@pytest.mark.parametrize(
    ("text", "tokens", "ids"),
    [
        (
            "Summarizing WeChat trends",
            ["sum", "##mar", "##izing", "we", "##cha", "##t", "trends"],
            [7680, 7849, 6026, 2057, 7507, 2102, 12878],
        ),
        ("Déjà vu, café!", ["de", "##ja", "vu", ",", "cafe", "!"], [2139, 3900, 24728, 1010, 7668, 999]),
        ("within 1km", ["within", "1", "##km"], [2306, 1015, 22287]),
        (
            "天气预报 for Beijing",
            ["天", "[UNK]", "[UNK]", "[UNK]", "for", "beijing"],
            [1811, 100, 100, 100, 2005, 7211],
        ),
        ("unsubscribe", ["un", "##su", "##bs", "##cr", "##ibe"], [4895, 6342, 5910, 26775, 20755]),
        ("don't", ["don", "'", "t"], [2123, 1005, 1056]),
        ("hyperparameterization", ["hyper", "##para", "##meter", "##ization"], [23760, 28689, 22828, 3989]),
    ],
)
def test_splits_as_the_models_tokenizer_does(text: str, tokens: list[str], ids: list[int]) -> None:
    wordpiece = shipped().wordpiece
    assert wordpiece.ids(text, identifiers=False) == ids
    assert [wordpiece.vocab[t] for t in tokens] == ids


def test_identifiers_are_split_into_words_first() -> None:
    wordpiece = shipped().wordpiece
    assert wordpiece.words("getPullRequest list_files") == ["get", "pull", "request", "list", "files"]
    assert wordpiece.words("getPullRequest", identifiers=False) == ["getpullrequest"]
    assert wordpiece.words("listPRs") == ["list", "pr"]


def test_greedy_longest_match_and_unknown_words() -> None:
    wordpiece = WordPiece(["[UNK]", "un", "##want", "##ed", "want", "##w"])
    assert wordpiece.ids("unwanted wanted") == [1, 2, 3, 4, 3]
    assert wordpiece.ids("xyz") == [0]  # no piece fits: the whole word is unknown
    assert wordpiece.ids("w" * 101) == [0]  # BERT's word length limit
