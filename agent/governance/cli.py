"""`./safeclaw rules` (list the proposals) and `./safeclaw rules accept N` (the owner merges one)."""

from __future__ import annotations

import sys

from agent.config.settings import AgentSettings
from agent.governance.files import Governance, GovernanceError, stamp


def rules_command(settings: AgentSettings, verb: str | None, number: str | None) -> int:
    governance = Governance(settings.workspace.root)
    governance.ensure()
    if verb in (None, "list"):
        proposals = governance.proposals()
        if not proposals:
            print("No rule proposals yet.")
        for p in proposals:
            state = f"accepted {stamp(p.accepted_at)}" if p.accepted_at else "open"
            why = f" — why: {p.why}" if p.why else ""
            print(f"#{p.number} [{state}] {p.rule}{why}{p.sources_line()}")
        return 0
    if verb != "accept" or number is None or not number.isdigit():
        print("usage: ./safeclaw rules [list]  |  ./safeclaw rules accept N", file=sys.stderr)
        return 2
    try:
        accepted = governance.accept(int(number))
    except GovernanceError as exc:
        print(f"safeclaw: {exc}", file=sys.stderr)
        return 1
    print(f"Accepted #{accepted.number} into {governance.path('DOS.md')}: {accepted.rule}")
    return 0
