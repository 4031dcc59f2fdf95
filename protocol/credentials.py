"""Which environment variables hold each platform's credentials, and which of them are secrets."""

# Platform credentials live in the router alone. The agent refuses to start when any of these
# is in its environment, and the router redacts their values from everything it emits.
PLATFORM_CREDENTIAL_VARIABLES: dict[str, tuple[str, ...]] = {
    "bsky": ("BSKY_HANDLE", "BSKY_PASSWORD"),
    "mastodon": ("MASTODON_INSTANCE", "MASTODON_TOKEN"),
    "reddit": ("REDDIT_CLIENT_ID", "REDDIT_SECRET", "REDDIT_USERNAME", "REDDIT_PASSWORD"),
    "x": ("X_API_KEY", "X_API_SECRET", "X_ACCESS_TOKEN", "X_ACCESS_SECRET"),
    "moltbook": ("MOLTBOOK_API_KEY",),
}
# Of those, the ones that are secrets (a handle or an instance URL is an identifier, not a secret).
SECRET_CREDENTIAL_VARIABLES: frozenset[str] = frozenset(
    {
        "BSKY_PASSWORD",
        "MASTODON_TOKEN",
        "REDDIT_CLIENT_ID",
        "REDDIT_SECRET",
        "REDDIT_PASSWORD",
        "X_API_KEY",
        "X_API_SECRET",
        "X_ACCESS_TOKEN",
        "X_ACCESS_SECRET",
        "MOLTBOOK_API_KEY",
    }
)
