"""The governance files under workspace/governance/: the owner's rules (DOS.md), the agent's own
mistakes (VIOLATIONS.md) and gaps (UNKNOWNS.md), its rule proposals (PROPOSED_RULES.md, merged
into DOS.md only by the owner) and every rule injected from outside (external_overrides.md)."""
