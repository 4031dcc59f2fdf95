"""What the agent, the router and the dashboard share, one module a subject (JSON on the wire, Redis
between them):

- `commands`: the command envelope, command ids, fingerprints and intents; `replies`: status and reply;
  `wire`: the protocol version, `ProtocolError` and strict JSON field reading.
- `keys`: every Redis key name; `heartbeat`: the heartbeat format and its freshness rule.
- `credentials`: the platforms' credential variables; `redaction`: the one redactor, with what it
  searches for (`secret_tables`, `secret_shapes`), the spellings and views it reads (`spellings`,
  `redaction_views`, `blobs`) and a value's strings (`value_strings`).
- `untrusted`: outside text made inert, with `model_markup` (markup that steers a model, defused) and
  `injection_patterns` / `injection_detector` (why a text reads as an injection); `origin`: whose
  words a command carries; `hold_reasons`: why a command waits for the owner, and its sentence.
- `approvals`: a held command's record and the owner's side (the list, the decision);
  `autonomy_heartbeat`: autonomy's heartbeat and the rule for "stuck"; `rule_injections`: the
  rules the dashboard queues for the agent.
- `env_files`, `atomic_file`, `installed_python`: files and start-up helpers every process uses.

Nothing is re-exported here: each name has one import path, and importing one module does not load all.
"""
