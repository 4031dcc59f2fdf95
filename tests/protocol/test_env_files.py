"""The one dotenv reader, boolean parser and source merge the router, the dashboard and the
scripts share: they agree on what a file says, and a policy setting merges by strictness."""

import pytest

from protocol.env_files import (
    SettingError,
    fold_name,
    merge_sources,
    near_miss,
    parse_bool,
    read_env_file,
    stricter_bool,
)
from scripts.stack_env import router_environment

KNOWN = {"ROUTER_KILL_SWITCH", "ROUTER_DRY_RUN", "REDIS_URL"}


@pytest.mark.parametrize(("raw", "value"), [("TRUE", True), (" on ", True), ("1", True), ("No", False),
                                             ("off", False), ("", False), (None, False)])
def test_one_boolean_parser(raw, value):
    assert parse_bool("X", raw) is value


@pytest.mark.parametrize("raw", ["maybe", "2", "truee", "да"])
def test_a_boolean_that_is_neither_stops_naming_the_setting(raw):
    with pytest.raises(SettingError, match="X must be true or false"):
        parse_bool("X", raw)


def test_folding_reads_separators_case_and_look_alike_letters_as_the_plain_name():
    assert fold_name("router-kill.switch") == "ROUTER_KILL_SWITCH"
    assert fold_name("ROUT\u0415R_KILL_SWITCH") == "ROUTER_KILL_SWITCH"
    assert fold_name("ROUTER_KILL_SWITCH\u200b") == "ROUTER_KILL_SWITCH"


@pytest.mark.parametrize("name", ["ROUTER-KILL-SWITCH", "ROUTERS_KILL_SWITCH", "KILL_SWITCH", "router_dry_run",
                                  "ROUTER_KILL_SWITC", "ROUT\u0415R_DRY_RUN"])
def test_near_misses_name_the_meant_setting(name):
    assert near_miss(name, KNOWN, "ROUTER_") in KNOWN


@pytest.mark.parametrize("name", ["ROUTER_KILL_SWITCH", "PATH", "HOME", "SWITCH", "PYTHONPATH", "REDIS_HOST"])
def test_names_that_are_known_or_unrelated_are_not_near_misses(name):
    assert near_miss(name, KNOWN, "ROUTER_") is None


def test_the_reader_refuses_a_line_it_would_otherwise_skip(tmp_path):
    path = tmp_path / "x.env"
    path.write_text("A=1\nB\n", encoding="utf-8")
    with pytest.raises(SettingError, match="line 2"):
        read_env_file(path)
    assert read_env_file(tmp_path / "missing.env") == {}


def test_an_empty_policy_value_never_weakens_and_the_note_says_so():
    merged = merge_sources({"K": "true"}, {"K": ""}, {"K": stricter_bool(True)}, "router/.env")
    assert merged.values["K"] == "true" and merged.notes


def test_the_scripts_report_the_dry_run_the_router_will_apply():
    _env, dry_run = router_environment({"ROUTER_DRY_RUN": "false"}, {"ROUTER_DRY_RUN": "true"}, "redis://x")
    assert dry_run is True
