"""The agent's link to the router, which it meets only through Redis: commands sent and their
replies (`router_client`), commands on disk until answered (`pending_commands`), and the owner's
approvals of held commands, asked and relayed (`approval_desk`); whose words each command
carries, its origin and taint (`origin`); the process's one Redis pool they all use (`redis_pool`)."""
