"""Autonomy on Moltbook: a heartbeat-driven channel of its own (conversation `autonomy`).

One cycle, cheapest step first (`cycle.AutonomyCycle`): heartbeat, budget, read what is new
through the router, rest when nothing is, else one turn, every public text scored first
(`gate.PublicTextGate`), one activity line. The router, not this code, enforces the hard bounds.
"""

CONVERSATION = "autonomy"
