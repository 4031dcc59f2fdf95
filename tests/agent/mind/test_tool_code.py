import pytest

from agent.errors import ToolCodeError
from agent.mind.tool_code import parse_reply

SCHEMAS = {
    "_MEMORY_WRITE": {
        "type": "object",
        "properties": {"new_memory": {"type": "object", "minProperties": 1}},
        "required": ["new_memory"],
        "additionalProperties": False,
    },
    "PING": {"type": "object", "properties": {}, "additionalProperties": False},
}


def test_plain_text_has_no_actions():
    parsed = parse_reply("  Hello there.  ", SCHEMAS)
    assert parsed.message == "Hello there."
    assert parsed.actions == []


def test_message_and_actions_are_split():
    raw = 'Saving it. <tool_code>[{"name": "_MEMORY_WRITE", "params": {"new_memory": {"cat": "Miso"}}}]</tool_code>'
    parsed = parse_reply(raw, SCHEMAS)
    assert parsed.message == "Saving it."
    assert [(a.name, a.params) for a in parsed.actions] == [
        ("_MEMORY_WRITE", {"new_memory": {"cat": "Miso"}})
    ]


def test_code_fence_inside_block_and_text_after_are_accepted():
    raw = 'A <tool_code>\n```json\n[{"name": "PING", "params": {}}]\n```\n</tool_code> B'
    parsed = parse_reply(raw, SCHEMAS)
    assert parsed.message == "A B"
    assert parsed.actions[0].name == "PING"


def test_two_blocks_are_both_parsed():
    raw = '<tool_code>[{"name": "PING", "params": {}}]</tool_code> and <TOOL_CODE>[{"name": "PING", "params": {}}]</TOOL_CODE>'
    assert len(parse_reply(raw, SCHEMAS).actions) == 2


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("<tool_code>[{'name': 'PING'</tool_code>", "not valid JSON"),
        ('<tool_code>{"name": "PING", "params": {}}</tool_code>', "must be a JSON list"),
        ('<tool_code>[{"name": "DROP_TABLES", "params": {}}]</tool_code>', "unknown action 'DROP_TABLES'"),
        ('<tool_code>[{"name": "PING"}]</tool_code>', "has no 'params'"),
        ('<tool_code>[{"name": "PING", "params": []}]</tool_code>', "'params' must be an object"),
        ('<tool_code>[{"name": "_MEMORY_WRITE", "params": {}}]</tool_code>', "new_memory"),
        ('<tool_code>[{"name": "PING", "params": {"x": 1}}]</tool_code>', "Additional properties"),
        ('<tool_code>[{"params": {}}]</tool_code>', "has no 'name'"),
        ('<tool_code>["PING"]</tool_code>', "must be an object"),
        ('<tool_code>[{"name": "PING", "params": {}}]', "not closed"),
        ("text </tool_code>", "without an opening"),
        ('<tool_code>[{"name": "PING", "params": {}, "run_as": "root"}]</tool_code>', "unexpected fields"),
        ("<tool_code>" + '{"name": "PING", "params": {}},' * 3 + "</tool_code>", "not valid JSON"),
    ],
)
def test_malformed_blocks_raise_a_message_for_the_llm(raw, fragment):
    with pytest.raises(ToolCodeError) as info:
        parse_reply(raw, SCHEMAS)
    assert fragment in str(info.value)


def test_too_many_actions_are_refused():
    raw = "<tool_code>[" + ",".join(['{"name": "PING", "params": {}}'] * 9) + "]</tool_code>"
    with pytest.raises(ToolCodeError, match="too many actions"):
        parse_reply(raw, SCHEMAS)


def test_huge_garbage_does_not_crash():
    raw = "<tool_code>" + "[" * 5000 + "</tool_code>"
    with pytest.raises(ToolCodeError):
        parse_reply(raw, SCHEMAS)


def test_bare_keys_and_single_quotes_are_forgiven():
    raw = "<tool_code>[{name: '_MEMORY_WRITE', params: {new_memory: {cat: 'Miso'}}}]</tool_code>"
    assert parse_reply(raw, SCHEMAS).actions[0].params == {"new_memory": {"cat": "Miso"}}


def test_repair_does_not_touch_colons_inside_strings():
    raw = (
        '<tool_code>[{"name": "_MEMORY_WRITE", "params": {"new_memory": {"time": "10:30, ok"}}}]</tool_code>'
    )
    assert parse_reply(raw, SCHEMAS).actions[0].params == {"new_memory": {"time": "10:30, ok"}}
