"""Storage URLs: the three ways Azure users name a blob or a folder of blobs.

- ``az://container/path`` (fsspec's and obstore's form: the account comes from the
  environment, :mod:`diagnostics.storage.auth`);
- ``abfs://container@account.dfs.core.windows.net/path`` and ``abfss://...`` (ADLS Gen2, as
  Spark and Synapse write them);
- ``https://account.blob.core.windows.net/container/path`` (the blob endpoint, as the portal
  and azcopy show it; ``.dfs.`` too).

A URL names a container and a path in it: a blob, or the folder of the blobs under it. A
query string (a SAS token pasted with the URL) is never kept: :func:`parse_url` refuses it,
so a secret cannot reach a message or a file (``AZURE_STORAGE_SAS_TOKEN`` carries it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from diagnostics.errors import InputError

#: The schemes a storage URL starts with.
SCHEMES = ("az", "abfs", "abfss", "https")
#: Azure's container names: 3-63 lower-case letters, digits and single hyphens.
_CONTAINER = re.compile(r"^(?=.{3,63}$)[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9]))*$")
_ACCOUNT = re.compile(r"^[a-z0-9]{3,24}$")
#: Azure's public storage hosts (and the national clouds' suffixes after them).
_HOST = re.compile(r"^(?P<account>[^.]+)\.(?P<service>blob|dfs)\.(?P<suffix>core\..+)$")


class UrlError(InputError):
    """A storage URL that cannot be read (the message names the URL, never a secret)."""


@dataclass(frozen=True, slots=True)
class StorageUrl:
    """A parsed storage URL. ``account`` is ``None`` for ``az://`` (from the environment);
    ``path`` has no leading or trailing ``/`` (``""``: the whole container)."""

    scheme: str
    container: str
    path: str
    account: str | None = None
    #: the endpoint suffix of a national cloud (``core.chinacloudapi.cn``), else ``None``
    suffix: str | None = None

    def __str__(self) -> str:
        """The URL as the user wrote it (normalised: no double or trailing slash)."""
        path = f"/{self.path}" if self.path else "/"
        if self.scheme == "az":
            return f"az://{self.container}{path}"
        host = f"{self.account}.{'blob' if self.scheme == 'https' else 'dfs'}.{self.suffix}"
        if self.scheme == "https":
            return f"https://{host}/{self.container}{path}"
        return f"{self.scheme}://{self.container}@{host}{path}"

    def child(self, name: str) -> str:
        """The URL of blob ``name`` (a full blob name in the container)."""
        base = str(StorageUrl(self.scheme, self.container, "", self.account, self.suffix))
        return base + name

    @property
    def abfss(self) -> str | None:
        """The ``abfss://`` form Spark's hadoop-azure reads (``None``: no account known)."""
        if self.account is None:
            return None
        path = f"/{self.path}" if self.path else "/"
        return f"abfss://{self.container}@{self.account}.dfs.{self.suffix}{path}"


def is_url(text: object) -> bool:
    """Whether ``text`` is a storage URL (by its scheme; local paths never are)."""
    if not isinstance(text, str):
        return False
    scheme, sep, _rest = text.strip().partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def _clean_path(path: str) -> str:
    parts = [unquote(p) for p in path.split("/") if p]
    return "/".join(parts)


def parse_url(text: str) -> StorageUrl:
    """The :class:`StorageUrl` of ``text``; a :class:`UrlError` saying what is wrong."""
    given = text.strip()
    try:
        split = urlsplit(given)
    except ValueError as exc:
        msg = f"{given}: not a storage URL ({exc})"
        raise UrlError(msg) from exc
    scheme = split.scheme.lower()
    shown = f"{scheme}://{split.netloc}{split.path}"  # never the query: it may hold a SAS
    if split.query or split.fragment:
        msg = (
            f"{shown}: a storage URL takes no query string (put a SAS token in "
            "AZURE_STORAGE_SAS_TOKEN, never in the URL: it would show in logs)"
        )
        raise UrlError(msg)
    if scheme not in SCHEMES:
        msg = f"{shown}: not a storage URL (az://, abfs[s]://, https://ACCOUNT.blob.core.windows.net/)"
        raise UrlError(msg)
    account: str | None = None
    suffix: str | None = None
    if scheme == "az":
        container, path = split.netloc, split.path
        if "@" in container:
            msg = f"{shown}: az://CONTAINER/PATH names no account (abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH does)"
            raise UrlError(msg)
    elif scheme in ("abfs", "abfss"):
        container, at, host = split.netloc.partition("@")
        found = _HOST.match(host.lower())
        if not at or found is None:
            msg = f"{shown}: expected {scheme}://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH"
            raise UrlError(msg)
        account, suffix, path = found["account"], found["suffix"], split.path
    else:
        found = _HOST.match(split.netloc.lower())
        if found is None:
            msg = f"{shown}: expected https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH"
            raise UrlError(msg)
        account, suffix = found["account"], found["suffix"]
        container, _, path = split.path.lstrip("/").partition("/")
    if not container:
        msg = f"{shown}: the URL names no container"
        raise UrlError(msg)
    if not _CONTAINER.match(container):
        msg = (
            f"{shown}: {container!r} is not a container name (3-63 lower-case letters, "
            "digits and single hyphens)"
        )
        raise UrlError(msg)
    if account is not None and not _ACCOUNT.match(account):
        msg = f"{shown}: {account!r} is not a storage account name (3-24 lower-case letters and digits)"
        raise UrlError(msg)
    return StorageUrl(scheme, container, _clean_path(path), account, suffix)


__all__ = ["SCHEMES", "StorageUrl", "UrlError", "is_url", "parse_url"]
