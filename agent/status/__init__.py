"""The stack's health as the agent sees it: `status` and `doctor` (`report`), what they check on Redis
(`stack`) and on this machine (`host`), one line of either (`line`), and the agent's own heartbeat."""
