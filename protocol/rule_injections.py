"""Rules the owner injects from the dashboard, waiting for the agent: a Redis list
(`Keys.rule_injections`, newest first) of JSON `{rule, why, author, ts}` or `{accept: N, author, ts}`.
The dashboard pushes, the agent applies and removes (`agent.governance.injections`)."""

MAX_PENDING = 200  # entries waiting for the agent; the dashboard refuses more (nothing is dropped)
