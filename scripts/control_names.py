"""The owner's control commands of `./safeclaw` by name (scripts/control_cli.py runs them): the
runner tells one from a start by its first word, before it imports what a command needs."""

COMMANDS = ("approvals", "approve", "deny", "stop-posting", "resume-posting", "audit")
