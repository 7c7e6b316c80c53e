"""docs/configuration.md's option tables say what `config/settings.py` declares: every option of
`tools`, `proxy` and `supervisor` has its row, every row names an option there is, with its default
(of the same JSON kind), and a setting with named values names each of them. The example's
`supervisor` section is said to hold the defaults: it does. Written by hand, checked here."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from pathlib import Path
from typing import Any

from mcpmanager.core.config.options import default_of, json_key
from mcpmanager.core.config.settings import ProxySettings, SupervisorSettings, ToolSettings

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
SECTIONS: dict[str, type[Any]] = {"tools": ToolSettings, "proxy": ProxySettings, "supervisor": SupervisorSettings}
ABSENT = "absent"  # the table's word for an option that is not written unless set (its default is None)


@dataclasses.dataclass(frozen=True)
class Row:
    key: str
    default: str  # as the table writes it: `false`, `"discovery"`, 30, absent
    meaning: str


def tables(text: str) -> dict[str, list[Row]]:
    """The `| key | default | meaning |` table under each `## \\`section\\`` heading."""
    found: dict[str, list[Row]] = {}
    section, table = None, False
    for line in text.splitlines():
        if heading := re.fullmatch(r"## `(\w+)`.*", line):
            section, table = heading.group(1), False
        elif line.startswith("## "):
            section, table = None, False
        elif line.startswith("| key |"):
            table = section is not None and line == "| key | default | meaning |"
        elif table and line.startswith("| "):
            keys, defaults, meaning = (cell.strip() for cell in line.strip("|").split(" | ", 2))
            names = re.findall(r"`(\w+)`", keys)
            values = [d.strip() for d in defaults.split(", ")] if len(names) > 1 else [defaults]
            assert len(values) == len(names), f"{line}: {len(names)} keys, {len(values)} defaults"
            found.setdefault(str(section), []).extend(Row(k, v, meaning) for k, v in zip(names, values, strict=True))
        elif not line.startswith("|"):
            table = False
    return found


def _json(written: str) -> Any:
    return None if written == ABSENT else json.loads(written.strip("`"))


def _kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    return "number" if isinstance(value, int | float) else type(value).__name__


def _choices(settings: type[Any], name: str) -> tuple[str, ...]:
    """The named values of a `Literal` option (`Approval | None` included), else ()."""
    hint = typing.get_type_hints(settings)[name]
    literals = [hint] if typing.get_origin(hint) is typing.Literal else list(typing.get_args(hint))
    return tuple(c for lit in literals if typing.get_origin(lit) is typing.Literal for c in typing.get_args(lit))


def disagreements(text: str) -> list[str]:
    found = tables(text)
    wrong: list[str] = []
    for section, settings in SECTIONS.items():
        rows = {row.key: row for row in found.get(section, [])}
        fields = {json_key(field.name): field for field in dataclasses.fields(settings)}
        wrong += [f"{section}.{key}: in the code, not in the doc" for key in fields.keys() - rows.keys()]
        wrong += [f"{section}.{key}: in the doc, not in the code" for key in rows.keys() - fields.keys()]
        for key in rows.keys() & fields.keys():
            row, field = rows[key], fields[key]
            default, written = default_of(field), _json(rows[key].default)
            if _kind(written) != _kind(default) or written != default:
                wrong.append(f"{section}.{key}: the doc's default is {row.default}, the code's {json.dumps(default)}")
            wrong += [
                f"{section}.{key}: the doc does not name the value {choice!r}"
                for choice in _choices(settings, field.name)
                if f"`{choice}`" not in row.meaning
            ]
    return wrong


def example(text: str) -> dict[str, Any]:
    block = re.search(r"## An example\n\n```json\n(.*?)\n```", text, re.DOTALL)
    assert block, "docs/configuration.md has no example"
    value: dict[str, Any] = json.loads(block.group(1))
    return value


def test_the_doc_s_tables_are_the_declared_options() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert set(tables(text)) == set(SECTIONS)
    assert disagreements(text) == []


def test_the_example_s_supervisor_section_is_the_defaults() -> None:
    shown = example(DOC.read_text(encoding="utf-8"))["supervisor"]
    defaults = {json_key(f.name): default_of(f) for f in dataclasses.fields(SupervisorSettings)}
    assert shown == defaults


def test_an_option_missing_from_the_doc_is_named() -> None:
    text = DOC.read_text(encoding="utf-8")
    without = "\n".join(line for line in text.splitlines() if not line.startswith("| `learnFromUse` |"))
    assert disagreements(without) == ["proxy.learnFromUse: in the code, not in the doc"]


def test_a_row_for_an_option_the_code_does_not_have_is_named() -> None:
    text = DOC.read_text(encoding="utf-8")
    extra = text.replace("| `stopGrace` | 2 |", "| `stopGrace` | 2 | x |\n| `stopGraceMax` | 9 |")
    assert disagreements(extra) == ["supervisor.stopGraceMax: in the doc, not in the code"]


def test_a_different_default_or_kind_is_named() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "| `port` | `0` |" in text and "| `learnFromUse` | `true` |" in text
    changed = text.replace("| `port` | `0` |", "| `port` | `8080` |")
    assert disagreements(changed) == ["proxy.port: the doc's default is `8080`, the code's 0"]
    as_string = text.replace("| `learnFromUse` | `true` |", '| `learnFromUse` | `"true"` |')
    assert disagreements(as_string) == ["proxy.learnFromUse: the doc's default is `\"true\"`, the code's true"]
    paired = text.replace("| 1, 60 |", "| 1, 90 |")
    assert disagreements(paired) == ["supervisor.backoffMax: the doc's default is 90, the code's 60.0"]


def test_a_named_value_the_doc_leaves_out_is_named() -> None:
    text = DOC.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `newTools` |"))
    assert disagreements(text.replace(row, row.replace("`hold`", "hold"))) == [
        "proxy.newTools: the doc does not name the value 'hold'"
    ]
