"""What the agent and the router share, one module a subject (JSON on the wire, Redis between them):

- `commands`: the command envelope, command ids, fingerprints and intents; `replies`: status and reply;
  `wire`: the protocol version, `ProtocolError` and strict JSON field reading.
- `keys`: every Redis key name; `heartbeat`: the heartbeat format and its freshness rule.
- `credentials`: the platforms' credential variables; `redaction`, `secret_shapes`, `spellings`, `blobs`:
  the one redactor and what it finds secrets in.
- `untrusted`, `origin`, `injection_detector`: outside text made inert, whose words a command carries.
- `env_files`, `atomic_file`, `installed_python`: files and start-up helpers every process uses.

Nothing is re-exported here: each name has one import path, and importing one module does not load all.
"""
