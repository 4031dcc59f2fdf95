"""What people call each platform, by SafeClaw's key for it: for every message a person reads."""

PLATFORM_NAMES = {
    "bsky": "Bluesky", "mastodon": "Mastodon", "moltbook": "Moltbook", "reddit": "Reddit", "x": "X",
}
