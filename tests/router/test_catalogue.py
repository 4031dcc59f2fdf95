"""workspace/router_actions.json is exactly what the skills say of themselves."""

import json

from router.catalogue import CATALOGUE_FILE, main, render
from router.registry import discover_skills


def test_the_shipped_catalogue_is_generated_from_the_skills():
    skills = discover_skills()
    assert CATALOGUE_FILE.read_text(encoding="utf-8") == render(skills)
    entries = {e["name"]: e for e in json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))}
    assert entries.keys() == skills.keys()
    assert entries["NOTE"]["params"] == skills["NOTE"].schema
    assert "delay_seconds" not in json.dumps(entries)  # test hooks are not in the shipped skills


def test_check_fails_on_a_stale_file_and_writing_fixes_it(tmp_path, capsys):
    target = tmp_path / "router_actions.json"
    target.write_text("[]\n", encoding="utf-8")
    assert main(["--check"], target) == 1
    assert "python -m router.catalogue" in capsys.readouterr().err
    assert main([], target) == 0
    assert main(["--check"], target) == 0
