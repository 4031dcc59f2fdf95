"""Where a SafeClaw process finds its Redis: a REDIS_URL, read the same way by every process.

Either one server, as redis-py reads it (`redis://`, `rediss://` for TLS, `unix://`), or the
primary that Sentinel names:

    redis+sentinel://[user:password@]host:port[,host:port...]/master-name[/db][?options]
    rediss+sentinel://...   (TLS to the Sentinels and to the primary)

or a Redis Cluster, found from any of its nodes (every key of SafeClaw shares one hash tag, so
the cluster keeps them on one slot: see protocol.keys):

    redis+cluster://[user:password@]host:port[,host:port...][?options]
    rediss+cluster://...   (TLS to every node)

The login (user:password) and the query's TLS options (`ssl_ca_certs`, `ssl_certfile`,
`ssl_keyfile`, `ssl_cert_reqs`, ...) are those of the primary, as in a `redis://` URL; Sentinels that
require a login of their own take `sentinel_username` and `sentinel_password` in the query (they
are otherwise reached without one, as redis-py's `Sentinel` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

from redis.connection import parse_url

SENTINEL_SCHEMES = {"redis+sentinel": "redis", "rediss+sentinel": "rediss"}
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
PLAIN_SCHEMES = ("redis", "rediss", "unix")
DEFAULT_SENTINEL_PORT = 26379
DEFAULT_REDIS_PORT = 6379
SENTINEL_LOGIN_OPTIONS = ("sentinel_username", "sentinel_password")


class AddressError(ValueError):
    """A REDIS_URL that cannot be read (the message never holds its password)."""


@dataclass(frozen=True)
class RedisAddress:
    url: str = field(repr=False)  # as given (holds the password)
    sentinels: tuple[tuple[str, int], ...] = ()  # empty: one server at `url`
    service: str = ""  # the master name Sentinel knows the primary by
    options: dict[str, Any] = field(default_factory=dict, repr=False)  # login, db, TLS (parse_url's)
    sentinel_login: dict[str, str] = field(default_factory=dict, repr=False)
    cluster_nodes: tuple[tuple[str, int], ...] = ()  # a Redis Cluster, found from any of these

    @property
    def is_sentinel(self) -> bool:
        return bool(self.sentinels)

    @property
    def is_cluster(self) -> bool:
        return bool(self.cluster_nodes)

    @property
    def tls(self) -> bool:
        return self.url.split("://", 1)[0].lower().startswith("rediss")

    @property
    def where(self) -> str:
        """For messages and logs: the server, or the Sentinels and the master name (no login)."""
        if self.is_sentinel:
            hosts = ",".join(f"{host}:{port}" for host, port in self.sentinels)
            return f"Sentinel {hosts} (primary {self.service!r})"
        if self.is_cluster:
            return "Redis Cluster " + ",".join(f"{host}:{port}" for host, port in self.cluster_nodes)
        options = self.options
        if options.get("path"):
            return str(options["path"])
        return f"{options.get('host', '127.0.0.1')}:{options.get('port', 6379)}"

    @property
    def username(self) -> str:
        return str(self.options.get("username") or "")


def scheme_of(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def parse_address(url: str) -> RedisAddress:
    """`url` read as described above; `AddressError` says what is wrong with it."""
    scheme = scheme_of(url)
    if scheme in SENTINEL_SCHEMES:
        return _sentinel_address(url, SENTINEL_SCHEMES[scheme])
    if scheme in CLUSTER_SCHEMES:
        return _cluster_address(url, CLUSTER_SCHEMES[scheme])
    if scheme not in PLAIN_SCHEMES:
        raise AddressError(
            "REDIS_URL must start with redis://, rediss://, unix://, redis+sentinel://, rediss+sentinel://, "
            "redis+cluster:// or rediss+cluster://"
        )
    return RedisAddress(url=url, options=_url_options(url))


def _url_options(url: str) -> dict[str, Any]:
    try:
        return dict(parse_url(url))
    except ValueError:
        raise AddressError(
            "REDIS_URL cannot be parsed: percent-encode any '/', '#', '?', '@' or ':' in its password "
            "(e.g. '/' as %2F)"
        ) from None


def _sentinel_address(url: str, plain_scheme: str) -> RedisAddress:
    rest = url.split("://", 1)[1]
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    login, _, hosts = netloc.rpartition("@")
    sentinels = tuple(_host_port(part) for part in hosts.split(",") if part.strip())
    parts = [unquote(part) for part in path.split("/") if part]
    if not sentinels:
        raise AddressError("a redis+sentinel:// URL needs at least one Sentinel host:port")
    if not parts or len(parts) > 2:
        raise AddressError("a redis+sentinel:// URL ends with /master-name or /master-name/db")
    service, db = parts[0], parts[1] if len(parts) == 2 else "0"
    if not db.isdigit():
        raise AddressError(f"a redis+sentinel:// URL's database must be a number, not {db!r}")
    pairs = parse_qsl(query, keep_blank_values=True)
    sentinel_login = {name: value for name, value in pairs if name in SENTINEL_LOGIN_OPTIONS and value}
    rest_query = urlencode([(name, value) for name, value in pairs if name not in SENTINEL_LOGIN_OPTIONS])
    userinfo = f"{login}@" if login else ""
    plain = f"{plain_scheme}://{userinfo}127.0.0.1/{db}" + (f"?{rest_query}" if rest_query else "")
    options = _url_options(plain)
    for name in ("host", "port", "connection_class"):
        options.pop(name, None)
    return RedisAddress(url=url, sentinels=sentinels, service=service, options=options,
                        sentinel_login=sentinel_login)


def _cluster_address(url: str, plain_scheme: str) -> RedisAddress:
    rest = url.split("://", 1)[1]
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    login, _, hosts = netloc.rpartition("@")
    nodes = tuple(_host_port(part, DEFAULT_REDIS_PORT) for part in hosts.split(",") if part.strip())
    if not nodes:
        raise AddressError("a redis+cluster:// URL needs at least one node host:port")
    if path.strip("/") not in ("", "0"):
        raise AddressError("a Redis Cluster has database 0 only: a redis+cluster:// URL ends with the nodes")
    userinfo = f"{login}@" if login else ""
    plain = f"{plain_scheme}://{userinfo}127.0.0.1/0" + (f"?{query}" if query else "")
    options = _url_options(plain)
    for name in ("host", "port", "connection_class", "db"):
        options.pop(name, None)
    return RedisAddress(url=url, cluster_nodes=nodes, options=options)


def _host_port(text: str, default_port: int = DEFAULT_SENTINEL_PORT) -> tuple[str, int]:
    text = text.strip()
    if text.startswith("["):  # [IPv6]:port
        host, _, port = text[1:].partition("]")
        port = port.removeprefix(":")
    else:
        host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    if not host:
        raise AddressError(f"a Redis address {text!r} has no host")
    if port and not port.isdigit():
        raise AddressError(f"a Redis address {text!r} has a port that is not a number")
    return host, int(port) if port else default_port
