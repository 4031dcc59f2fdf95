import json

from agent.cost.ledger import CostEntry, CostLedger

DAY = 86_400.0
T0 = 1_800_000_000.0 - (1_800_000_000.0 % DAY)  # a UTC midnight


def entry(ts: float, usd: float, tokens: int = 10) -> CostEntry:
    return CostEntry(ts, "openai", "gpt-4o-mini", tokens, 0, usd, "default")


def test_totals_per_day_and_overall(tmp_path):
    clock = [T0 + 10]
    ledger = CostLedger(tmp_path / "cost.jsonl", lambda: clock[0])
    ledger.record(entry(T0 - 5, 1.0))  # yesterday
    ledger.record(entry(T0 + 1, 0.25, 7))
    ledger.record(entry(T0 + 2, 0.5, 3))
    today = ledger.today()
    assert (today.usd, today.calls, today.tokens) == (0.75, 2, 10)
    assert ledger.total() == 1.75
    clock[0] = T0 + DAY + 1
    assert ledger.today().usd == 0


def test_two_processes_sharing_the_file_see_each_others_calls(tmp_path):
    path = tmp_path / "cost.jsonl"
    chat, autonomy = CostLedger(path, lambda: T0), CostLedger(path, lambda: T0)
    chat.record(entry(T0, 0.1))
    autonomy.record(entry(T0, 0.2))
    assert chat.total() == autonomy.total() == 0.1 + 0.2


def test_each_line_says_what_was_spent_on_what(tmp_path):
    ledger = CostLedger(tmp_path / "cost.jsonl")
    ledger.record(CostEntry(T0, "gemini", "gemini-2.5-flash", 100, 20, 0.00008, "default", False, "autonomy"))
    line = json.loads((tmp_path / "cost.jsonl").read_text())
    assert line["input_tokens"] == 100 and line["output_tokens"] == 20 and line["label"] == "autonomy"
    assert line["day"] == "2027-01-15" and line["usd"] == 0.00008


def test_lines_that_are_not_records_or_buy_budget_back_are_skipped(tmp_path):
    path = tmp_path / "cost.jsonl"
    path.write_text(
        'not json\n{"usd": -100, "ts": 1}\n{"usd": NaN, "ts": 1}\n{"usd": 1}\n'
        + entry(T0, 0.5).to_json()
        + "\n"
        + '{"usd": 9, "ts": 1'
    )  # last one half-written
    ledger = CostLedger(path, lambda: T0)
    assert ledger.total() == 0.5
    with path.open("a") as handle:
        handle.write(', "input_tokens": 1}\n')  # the half line completed later counts then
    assert ledger.total() == 9.5
