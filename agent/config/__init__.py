"""The agent's settings: `settings` reads config.json (no secrets) and the environment, `sections`
types each section, `reader` reads one object of it naming the file and the key on every error;
`initial.json` is the template copied to agent/config.json on the first run."""
