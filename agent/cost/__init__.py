"""What the LLM costs: prices, the ledger in workspace/logs/cost.jsonl, and the budget check made
before every call (see `agent.cost.metered.MeteredLLM`, the one wrapper every provider goes through)."""
