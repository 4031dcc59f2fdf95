"""The injection suite (AgentDojo-like, for a social agent): the case list, the two scripted
models, the world each case runs in, and the harm checks. `bench/injection_suite.py` runs it."""
