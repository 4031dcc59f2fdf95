"""The router's configuration: its settings (`settings`, read with `values`; `env_sources`:
which names it reads and how `router/.env` and the environment merge), platform credentials and the
Redis ACL it ships (`redis_acl`, also `python -m router.config.redis_acl`)."""
