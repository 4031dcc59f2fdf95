"""The check at every sink: an effect that sends bytes to someone other than the owner (a router
command's params: a post, a handle resolved, a search query; a URL the browser fetches, every
subresource and redirect included).

The rule, on the labels of what the bytes carry (`owner_only`):
- owner-only data goes only where the owner chose in their own words: the value is in the
  owner's message of this turn (and, for a URL, its host is one the owner wrote);
- else a turn that read outside text (or that someone else wrote) sends none of it: the
  browser refuses the URL here, and the router refuses a read whose origin `holds` it;
- a write that would publish owner-only data waits for the owner's approval, even when the owner
  wrote those words in an earlier message (the router holds a write whose origin `holds` it).

Searching the bytes finds the spellings a URL carries on its own; in a turn that read outside text
the model can spell a value any way it is told (reversed, one digit per query field, in words).
So there, by construction, an address the browser opens must be as the owner or the prompt the
model chose it from wrote it (a link of the page or post read, the path of one on a host it names;
on a host the owner named too: the owner chose to visit it, not what the model sends it), and a
name the router resolves (a post's handle, a did:web) one the owner or the prompt wrote: bytes the
model made up go nowhere. A page's own requests are the page's choice (`for_page`).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urlsplit

from agent.flow.owner_only import Needle, OwnerOnly, memory_needles, squeezed
from agent.flow.resolved_names import resolved_names
from agent.workspace.memory_index import MemoryIndex
from protocol.origin import OWNER, Origin, fold
from protocol.suspicion import TARGET_FIELDS

MAX_HOLDS = 8
# The params a router looks a name up by: a post's address, and a search's query (`from:handle`)
RESOLVED_FIELDS = TARGET_FIELDS | {"url", "query"}
NAMED_WHOLE = frozenset({"submolt"})  # a community, asked for by its name: as someone wrote it


@dataclass(frozen=True)
class SinkGuard:
    owner_only: OwnerOnly
    owner_said: str = ""  # the owner's message of this turn ("" when someone else wrote it)
    owner_words: tuple[str, ...] = ()  # every message of the owner's the turn's prompt shows
    tainted: bool = True
    # What the turn's reads hold for the owner only (notifications, direct messages), searched for
    # in a command's params when the turn may answer mentions with no approval (`mention_replies`).
    private_reads: OwnerOnly | None = None
    shown: str = ""  # the prompt the model chose this step's actions from ("": not known)

    def with_private_reads(self, needles: Iterable[Needle]) -> SinkGuard:
        return replace(self, private_reads=OwnerOnly(needles))

    def with_shown(self, prompt: str) -> SinkGuard:
        return replace(self, shown=prompt)

    @classmethod
    def for_turn(
        cls, memory: dict[str, Any] | MemoryIndex, history: list[dict[str, Any]], origin: Origin | None
    ) -> SinkGuard:
        """`memory` as a dict, or indexed (its owner-only values then found once per index)."""
        in_memory = memory.derived("owner_only", lambda index: memory_needles(index.memory)) if isinstance(
            memory, MemoryIndex) else memory_needles(memory)
        own = [str(t.get("user", "")) for t in history if not t.get("outside_author") and not t.get("notice")]
        owner_turn = origin is not None and origin.kind == OWNER and bool(origin.owner_words)
        said = origin.owner_words[-1] if origin is not None and owner_turn else ""
        words = origin.owner_words if origin is not None else ()
        owner_only = OwnerOnly.of({}, [*own, said], in_memory)
        return cls(owner_only, said, words, origin is None or origin.tainted)

    def unsaid(self, text: str, destination: str = "") -> list[str]:
        """What owner-only data `text` carries that the owner did not send there in their own
        words: each as the owner knows it ("your memory 'bank_pin'")."""
        carried = self.owner_only.carried(text)
        if not carried:
            return []
        said = squeezed(self.owner_said)
        chosen = not destination or self.owner_wrote(destination)
        return list(dict.fromkeys(n.where for n in carried if not (chosen and n.value in said)))

    def url_refusal(self, url: str) -> str | None:
        """Why the browser may not send this URL, or None."""
        if not self.tainted:
            return None
        host = urlsplit(url.strip()).hostname or ""
        found = self.unsaid(url, host)
        if not found:
            return None
        return (
            f"refused: this address carries {', '.join(found[:3])}, which is for your owner only, to "
            f"{host or 'a server'} that your owner did not choose in their own words (the turn had read "
            "outside text)"
        )

    def address_refusal(self, url: str) -> str | None:
        """Why the browser may not open this address the model chose, or None: the owner-only data
        it carries (`url_refusal`), or, in a turn that read outside text, an address made up: its
        host is not one the owner or the prompt names, or its path and query are not as written."""
        refusal = self.url_refusal(url)
        if refusal is not None or not self.tainted:
            return refusal
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        # path, query and fragment: the page's script reads the fragment, and may send it anywhere
        path = parts._replace(scheme="", netloc="").geturl()
        if not (self.owner_wrote(host) or self.shows(host)):
            made_up = "its host"
        elif not self.netloc_written(parts.netloc, host):
            made_up = "its user name, password or port (bytes the server reads)"
        elif path in ("", "/") or self.shows(path) or self.owner_wrote(path):
            return None
        else:
            made_up = "its path and query (even on a site your owner named)"
        return (
            f"refused: the turn had read outside text, and this address (on {host or 'no host'}) is not one "
            f"your owner or the text read wrote: {made_up} was made up, and could carry your owner's data "
            "in any spelling"
        )

    def owner_chose(self, url: str) -> bool:
        """Whether the owner's messages name this address: its host (with any user name, password
        or port), and its path unless it is the site's root."""
        parts = urlsplit(url.strip())
        host, path = parts.hostname or "", parts._replace(scheme="", netloc="").geturl()
        where = self.owner_wrote(host) and (_host_only(parts.netloc, host) or self.owner_wrote(parts.netloc))
        return where and (path in ("", "/") or self.owner_wrote(path))

    def netloc_written(self, netloc: str, host: str) -> bool:
        """Whether an address's user name, password and port, when it has any, are as the owner or
        the prompt wrote them with its host."""
        return _host_only(netloc, host) or self.owner_wrote(netloc) or self.shows(netloc)

    def owner_wrote(self, written: str) -> bool:
        """Whether the owner's messages hold this host, handle or path whole."""
        return bool(written) and _names(" ".join(self.owner_words), written, written.startswith("/"))

    def shows(self, written: str) -> bool:
        """Whether the prompt holds this host or path as written (URL-decoded, case folded for a host)."""
        if not written or not self.shown:
            return False
        path = written.startswith("/")
        shown, decoded = self._shown_readings
        return _names(shown, written, path) or _names(decoded, unquote(written), path)

    @functools.cached_property
    def _shown_readings(self) -> tuple[str, str]:
        """The prompt unescaped (it shows `&` in a result's link as `&amp;`), and URL-decoded too."""
        shown = html.unescape(self.shown)
        return shown, unquote(shown)

    def for_page(self, url: str) -> PageSinks:
        """The check of every request a page opened at `url` makes: the page chose them, not the
        owner, so they count as outside words whatever the turn had read before."""
        return PageSinks(replace(self, tainted=True), url)

    def holds(self, params: dict[str, Any]) -> tuple[str, ...]:
        """Why a router command with these params must not go out as it is: the owner-only data
        each param carries that the owner's message did not give it."""
        found = []
        for name, text in strings_of(params):
            made_up = self.made_up_names(text) if name in RESOLVED_FIELDS else []
            if name in NAMED_WHOLE and self.tainted and not (self.owner_wrote(text) or self.shows(text)):
                made_up = [text[:64]]
            if made_up:
                found.append(f"its {name} names {', '.join(made_up[:3])}, which neither you nor the text "
                             "read wrote (a name made up after reading outside text can carry your data to "
                             "whoever answers for it)")
            unsaid = self.unsaid(text)
            if self.private_reads is not None:
                unsaid += [n.where for n in self.private_reads.carried(text) if n.where not in unsaid][:1]
            if unsaid:
                found.append(f"its {name} carries {', '.join(unsaid[:3])}, which is for you only")
        return tuple(found[:MAX_HOLDS])

    def made_up_names(self, text: str) -> list[str]:
        """The names a lookup of this text would ask about (`resolved_names`) that a tainted turn's
        model made up: on no host the owner named, not in its prompt as written."""
        if not self.tainted:
            return []
        return [name for name in resolved_names(text) if not (self.owner_wrote(name) or self.shows(name))]


def _host_only(netloc: str, host: str) -> bool:
    """An address's netloc is its host alone: no user name, password or port."""
    return netloc.casefold() == host


def _names(text: str, name: str, path: bool = False) -> bool:
    """Whether `text` holds `name` whole: not as a part of a longer name (`a.com` in `data.com`,
    `/more` in `/moreover`). A path (case kept) follows its host."""
    folded, wanted = (text, name) if path else (fold(text), fold(name))
    start = folded.find(wanted)
    while start != -1:
        before = folded[start - 1] if start else " "
        end = start + len(wanted)
        after = folded[end] if end < len(folded) else " "
        if (path or not _in_name(before)) and not _in_name(after):
            return True
        start = folded.find(wanted, start + 1)
    return False


def _in_name(char: str) -> bool:
    return char.isalnum() or char in "-_"


def strings_of(params: Any, name: str = "") -> Iterable[tuple[str, str]]:
    if isinstance(params, str):
        yield name or "value", params
    elif isinstance(params, dict):
        for key, value in params.items():
            yield from strings_of(value, str(key)[:40])
    elif isinstance(params, list):
        for value in params:
            yield from strings_of(value, name)


@dataclass(frozen=True)
class PageSinks:
    """The guard proxy's check: the page's own address as the action allowed it, and every other
    request (a redirect, an image, a script's fetch) as one the page chose."""

    sinks: SinkGuard
    page_url: str

    def request_refusal(self, host: str, target: str) -> str | None:
        """Why one request may not leave (host, and the URL when the proxy sees it), or None."""
        if "://" in target and same_address(target, self.page_url):
            return None
        return self.sinks.url_refusal(target if "://" in target else f"https://{host}/")


def same_address(one: str, other: str) -> bool:
    return unquote(one.split("#", 1)[0]).rstrip("/") == unquote(other.split("#", 1)[0]).rstrip("/")
