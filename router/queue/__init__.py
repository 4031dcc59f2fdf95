"""The command queue: take a command (`worker`), decide its answer short of running it (`triage`), run
it within its deadline in its platform's lane (`deadline`, `lanes`), record and answer it (`records`,
`results`, `dead_letter`), and say the router is alive (`heartbeat`); `redis_io` is how it talks to Redis."""
