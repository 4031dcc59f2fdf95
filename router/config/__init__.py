"""The router's configuration: its settings (`settings`, read with `values`), platform credentials and the
Redis ACL it ships (`redis_acl`, also `python -m router.config.redis_acl`)."""
