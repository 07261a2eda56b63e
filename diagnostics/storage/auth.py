"""Credentials for a storage account, as Azure users have them (docs/storage.md,
"Credentials"), first found wins:

1. ``AZURE_STORAGE_CONNECTION_STRING`` (the portal's "Access keys" string, a SAS connection
   string, or Azurite's ``UseDevelopmentStorage=true`` / its full string with
   ``BlobEndpoint=``);
2. ``AZURE_STORAGE_ACCOUNT`` (or the account in the URL) with ``AZURE_STORAGE_KEY`` or
   ``AZURE_STORAGE_SAS_TOKEN``;
3. azure-identity's ``DefaultAzureCredential`` (environment service principal, workload or
   managed identity, ``az login``...) for the account in the URL or ``AZURE_STORAGE_ACCOUNT``.

``AZURE_STORAGE_BLOB_ENDPOINT`` overrides the endpoint (a private endpoint, an emulator).
A :class:`Credentials` never shows its secret: its ``repr`` and :meth:`describe` name only
the account and the kind of credential, and :func:`redact` removes the secrets from any text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from diagnostics.storage.urls import StorageUrl, UrlError

CONNECTION_STRING = "AZURE_STORAGE_CONNECTION_STRING"
ACCOUNT_VARS = ("AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_ACCOUNT_NAME")
KEY_VARS = ("AZURE_STORAGE_KEY", "AZURE_STORAGE_ACCOUNT_KEY")
SAS_VARS = ("AZURE_STORAGE_SAS_TOKEN",)
ENDPOINT_VAR = "AZURE_STORAGE_BLOB_ENDPOINT"
#: Azurite's well-known development account and key (public: Azure documents them).
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
DEV_ENDPOINT = "http://127.0.0.1:10000/devstoreaccount1"
_SIG = re.compile(r"(?i)\b(sig|accountkey|sharedaccesssignature|se|sp|sv|skoid|sktid)=[^&;\s\"']+")


class CredentialKind(StrEnum):
    """How the account is reached (what messages say; never the secret)."""

    KEY = "account key"
    SAS = "SAS token"
    IDENTITY = "DefaultAzureCredential"
    ANONYMOUS = "no credential (public container)"


@dataclass(frozen=True)
class Credentials:
    """The account, its endpoint and the credential; ``secret`` is hidden from ``repr``."""

    account: str
    kind: CredentialKind
    source: str
    endpoint: str | None = None
    secret: str | None = field(default=None, repr=False)

    def describe(self) -> str:
        """``account 'x' (account key from AZURE_STORAGE_CONNECTION_STRING)``."""
        return f"account {self.account!r} ({self.kind} from {self.source})"


def _parse_connection_string(text: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    for piece in text.strip().strip(";").split(";"):
        if not piece.strip():
            continue
        name, eq, value = piece.partition("=")
        if not eq:
            msg = (
                f"{CONNECTION_STRING}: a part without '=' (expected NAME=VALUE;...; the value "
                "is not shown)"
            )
            raise UrlError(msg)
        parts[name.strip().lower()] = value.strip()
    return parts


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str] | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return name, value
    return None


def _from_connection_string(text: str, env: Mapping[str, str]) -> Credentials:
    parts = _parse_connection_string(text)
    if parts.get("usedevelopmentstorage", "").lower() == "true":
        dev = env.get(ENDPOINT_VAR, "").strip() or DEV_ENDPOINT
        return Credentials(DEV_ACCOUNT, CredentialKind.KEY, CONNECTION_STRING, dev, DEV_KEY)
    account: str | None = parts.get("accountname")
    endpoint = env.get(ENDPOINT_VAR, "").strip() or parts.get("blobendpoint") or None
    if account is None and endpoint is not None:
        host = endpoint.split("://", 1)[-1].split("/", 1)[0]
        account = host.split(".", 1)[0] if ".blob." in host else None
    if not account:
        msg = f"{CONNECTION_STRING}: names no AccountName (the value is not shown)"
        raise UrlError(msg)
    if endpoint is None and parts.get("endpointsuffix"):
        protocol = parts.get("defaultendpointsprotocol", "https")
        endpoint = f"{protocol}://{account}.blob.{parts['endpointsuffix']}"
    if parts.get("accountkey"):
        return Credentials(
            account, CredentialKind.KEY, CONNECTION_STRING, endpoint, parts["accountkey"]
        )
    if parts.get("sharedaccesssignature"):
        sas = parts["sharedaccesssignature"].lstrip("?")
        return Credentials(account, CredentialKind.SAS, CONNECTION_STRING, endpoint, sas)
    return Credentials(account, CredentialKind.IDENTITY, CONNECTION_STRING, endpoint)


def credentials_for(url: StorageUrl, env: Mapping[str, str] | None = None) -> Credentials:
    """The credentials to read ``url`` with, from ``env`` (default: the process's)."""
    env = os.environ if env is None else env
    connection = env.get(CONNECTION_STRING, "").strip()
    if connection:
        found = _from_connection_string(connection, env)
        if url.account is not None and url.account != found.account:
            msg = (
                f"{url}: names account {url.account!r} but {CONNECTION_STRING} is for "
                f"account {found.account!r}"
            )
            raise UrlError(msg)
        return found
    named = _first(env, ACCOUNT_VARS)
    account = url.account or (named[1] if named else None)
    if account is None:
        msg = (
            f"{url}: az:// names no storage account: set AZURE_STORAGE_ACCOUNT (or "
            f"{CONNECTION_STRING}), or write abfss://{url.container}@ACCOUNT.dfs.core.windows.net/"
        )
        raise UrlError(msg)
    endpoint = env.get(ENDPOINT_VAR, "").strip() or None
    if endpoint is None and url.suffix and url.suffix != "core.windows.net":
        endpoint = f"https://{account}.blob.{url.suffix}"
    key = _first(env, KEY_VARS)
    if key is not None:
        return Credentials(account, CredentialKind.KEY, key[0], endpoint, key[1])
    sas = _first(env, SAS_VARS)
    if sas is not None:
        return Credentials(account, CredentialKind.SAS, sas[0], endpoint, sas[1].lstrip("?"))
    return Credentials(account, CredentialKind.IDENTITY, "azure-identity", endpoint)


def redact(text: str, credentials: Credentials | None = None) -> str:
    """``text`` without the secret of ``credentials`` nor anything shaped like a SAS
    signature or an account key (``sig=``, ``AccountKey=``...); query strings dropped."""
    if credentials is not None and credentials.secret:
        text = text.replace(credentials.secret, "***")
    text = _SIG.sub(lambda m: f"{m.group(1)}=***", text)
    return re.sub(r"(https?://[^\s?\"']+)\?[^\s\"']*", r"\1", text)


__all__ = ["CONNECTION_STRING", "CredentialKind", "Credentials", "credentials_for", "redact"]
