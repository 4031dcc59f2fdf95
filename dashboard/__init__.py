"""The owner's control plane: a small web app beside the agent and the router (see README)."""
