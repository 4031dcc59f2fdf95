"""The agent's action catalogue, generated from the skills themselves (one source of truth).

`workspace/router_actions.json` lists each skill's name, description (as the instruction the
model reads) and params schema. Regenerate after changing a skill:

    python -m router.catalogue          # write workspace/router_actions.json
    python -m router.catalogue --check  # exit 1 when the file differs from the skills
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from router.config.settings import REPO_ROOT
from router.registry import Skill, discover_skills

CATALOGUE_FILE = REPO_ROOT / "workspace" / "router_actions.json"


def catalogue(skills: Mapping[str, Skill]) -> list[dict[str, Any]]:
    return [
        {"name": skill.name, "instruction": skill.description, "params": skill.schema}
        for skill in sorted(skills.values(), key=lambda s: s.name)
    ]


def render(skills: Mapping[str, Skill]) -> str:
    return json.dumps(catalogue(skills), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None, target: Path = CATALOGUE_FILE) -> int:
    parser = argparse.ArgumentParser(prog="./safeclaw python -m router.catalogue",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when the file is stale")
    args = parser.parse_args(argv)
    text = render(discover_skills())
    current = target.read_text(encoding="utf-8") if target.is_file() else ""
    if args.check:
        if current != text:
            print(f"{target.name} differs from the skills: run ./safeclaw python -m router.catalogue",
                  file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
