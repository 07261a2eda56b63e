"""Reading a container through obstore (Rust's ``object_store``; chosen by measurement,
docs/performance.md, "Reading a storage account"): listing by prefix, whole blobs, byte
ranges. Every failure is a :class:`StorageError`: one line naming the URL and what went
wrong (access refused, no such container or blob, the account cannot be reached), never a
secret and never the library's own text (which may quote a signed URL).

Requests are retried by obstore (server errors, dropped connections) a bounded number of
times within :data:`RETRY_SECONDS`; a request times out after :data:`TIMEOUT`, or when the
connection stays silent for :data:`READ_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from diagnostics.errors import InputError
from diagnostics.storage.auth import CredentialKind, Credentials, credentials_for
from diagnostics.storage.urls import StorageUrl

#: The most a request may take (a large Capture blob on a slow link), the most a connection
#: may stay silent, and the most time spent retrying one request.
TIMEOUT = "1h"
READ_TIMEOUT = "60s"
RETRY_SECONDS = 20.0
MAX_RETRIES = 3
#: Blobs read at once.
PARALLEL = 16
_T = TypeVar("_T")


class StorageError(InputError):
    """A storage account that cannot be listed or read (exit 2; names the URL)."""


@dataclass(frozen=True, slots=True)
class Blob:
    """A blob as listed: its full name in the container, size, ETag and modification time."""

    name: str
    size: int
    etag: str
    modified: datetime


def _blob(meta: Any) -> Blob:
    modified = meta.get("last_modified") or datetime.fromtimestamp(0, UTC)
    etag = str(meta.get("e_tag") or "").strip('"')
    return Blob(str(meta["path"]), int(meta["size"]), etag, modified)


def _reason(exc: BaseException, credentials: Credentials) -> str:
    """Our words for an obstore error (its text is not shown: it may quote a signed URL)."""
    from obstore import exceptions as errors

    text = str(exc)
    for code, why in (
        ("ContainerNotFound", "not found (no such container)"),
        ("BlobNotFound", "not found (no such blob)"),
        (
            "AuthorizationPermissionMismatch",
            f"access refused: {credentials.describe()} may not read it",
        ),
        (
            "AuthorizationFailure",
            f"access refused: the credentials ({credentials.describe()}) were refused (a wrong key or token, or no permission)",
        ),
        (
            "AuthenticationFailed",
            f"access refused: the credentials ({credentials.describe()}) were refused (a wrong key or token)",
        ),
        ("ServerBusy", "the account is throttling requests (try again later)"),
    ):
        if f"<Code>{code}</Code>" in text:
            return why
    if isinstance(exc, errors.NotFoundError | FileNotFoundError):
        return "not found (no such container or blob)"
    if isinstance(exc, errors.PermissionDeniedError | errors.UnauthenticatedError):
        return f"access refused: the credentials ({credentials.describe()}) are not accepted or may not read it"
    for code, why in (
        ("403 Forbidden", f"access refused: {credentials.describe()}"),
        ("404 Not Found", "not found"),
        ("503 Service Unavailable", "the account is busy or throttling requests (try again later)"),
    ):
        if code in text:
            return why
    if "ClientAuthenticationError" in type(exc).__name__ or "CredentialUnavailable" in text:
        return f"no credential found ({credentials.describe()}): set AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, or sign in (az login)"
    return (
        f"cannot be read ({type(exc).__name__}: the account did not answer or the request failed)"
    )


@dataclass
class Container:
    """One container of one account, and the URL it was named by (for messages)."""

    url: StorageUrl
    credentials: Credentials
    store: Any

    @classmethod
    def open(cls, url: StorageUrl, env: dict[str, str] | None = None) -> Container:
        """The container ``url`` names, with the credentials of the environment."""
        from obstore.store import AzureStore

        credentials = credentials_for(url, env)
        config: dict[str, Any] = {"account_name": credentials.account}
        if credentials.endpoint:
            config["endpoint"] = credentials.endpoint
        provider = None
        if credentials.kind is CredentialKind.KEY:
            config["account_key"] = credentials.secret
        elif credentials.kind is CredentialKind.SAS:
            config["sas_key"] = credentials.secret
        else:
            from obstore.auth.azure import AzureCredentialProvider

            provider = AzureCredentialProvider()
        client: dict[str, Any] = {
            "timeout": TIMEOUT,
            "read_timeout": READ_TIMEOUT,
            "connect_timeout": "10s",
        }
        if (credentials.endpoint or "").startswith("http://"):
            client["allow_http"] = True
        retry: dict[str, Any] = {
            "max_retries": MAX_RETRIES,
            "retry_timeout": timedelta(seconds=RETRY_SECONDS),
            "backoff": {
                "init_backoff": timedelta(milliseconds=200),
                "max_backoff": timedelta(seconds=4),
                "base": 2,
            },
        }
        try:
            store = AzureStore(
                url.container,
                config=config,  # type: ignore[arg-type]
                client_options=client,  # type: ignore[arg-type]
                retry_config=retry,  # type: ignore[arg-type]
                credential_provider=provider,
            )
        except Exception as exc:  # a bad endpoint or configuration value
            msg = f"{url}: cannot open the container ({_reason(exc, credentials)})"
            raise StorageError(msg) from None
        return cls(url, credentials, store)

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except StorageError:
            raise
        except Exception as exc:
            msg = f"{what}: {_reason(exc, self.credentials)}"
            raise StorageError(msg) from None

    def list_all(self, prefix: str) -> list[Blob]:
        """Every blob under the folder ``prefix`` (``""``: the container), sorted by name."""
        import obstore

        with self._errors(self.url.child(prefix)):
            found = [
                _blob(m) for batch in obstore.list(self.store, prefix=prefix or None) for m in batch
            ]
        return sorted(found, key=lambda b: b.name)

    def list_level(self, prefix: str) -> tuple[list[str], list[Blob]]:
        """The sub-folders (``name/``) and blobs directly under the folder ``prefix``."""
        import obstore

        with self._errors(self.url.child(prefix)):
            result = obstore.list_with_delimiter(self.store, prefix or None)
        folders = sorted(p.rstrip("/") + "/" for p in result["common_prefixes"])
        return folders, sorted((_blob(m) for m in result["objects"]), key=lambda b: b.name)

    def head(self, name: str) -> Blob | None:
        """Blob ``name``, or ``None`` when there is none of that name."""
        import obstore
        from obstore import exceptions as errors

        if not name:
            return None
        with self._errors(self.url.child(name)):
            try:
                return _blob(obstore.head(self.store, name))
            except (errors.NotFoundError, FileNotFoundError):
                return None

    def read_range(self, name: str, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (exclusive) of blob ``name``."""
        import obstore

        with self._errors(self.url.child(name)):
            return bytes(obstore.get_range(self.store, name, start=start, end=end))

    def download(
        self, blobs: list[Blob], target: Callable[[Blob], Path], done: Callable[[Blob], None]
    ) -> None:
        """Write each blob to ``target(blob)`` (``PARALLEL`` at once); ``done`` after each."""
        import obstore

        async def one(blob: Blob, gate: asyncio.Semaphore) -> None:
            async with gate:
                with self._errors(self.url.child(blob.name)):
                    got = await obstore.get_async(self.store, blob.name)
                    data = await got.bytes_async()
                path = target(blob)
                try:
                    _write_replace(path, bytes(data))
                except OSError as exc:
                    msg = f"{path}: cannot be written ({exc.strerror or exc}); staging {self.url.child(blob.name)}"
                    raise StorageError(msg) from None
                done(blob)

        async def every() -> None:
            gate = asyncio.Semaphore(PARALLEL)
            await _gather([one(b, gate) for b in blobs])

        asyncio.run(every())


async def _gather(work: list[Awaitable[_T]]) -> list[_T]:
    """Every result, or the first error once every task has stopped."""
    tasks = [asyncio.ensure_future(w) for w in work]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _write_replace(path: Path, data: bytes) -> None:
    """``data`` as ``path``: written to a hidden temporary name beside it, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.part")  # two commands at once
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


__all__ = ["Blob", "Container", "StorageError"]
