"""The seed-compatible one-shot interface: `echo '{"command": ...}' | python -m router.social`."""
