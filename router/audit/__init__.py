"""The audit log: the hash-chained lines (`log`), their keyed checkpoint (`checkpoint`) and the check
of both (`verify`, also `python -m router.audit verify`)."""
