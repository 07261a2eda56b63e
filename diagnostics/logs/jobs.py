"""Which job a record (or a metrics row) belongs to, and the name the job is shown under.

Azure resource ids are case-insensitive, and each export spells them its own way: ASA writes
``resourceId`` upper-case (``.../PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/MYJOB``),
Log Analytics exports ``_ResourceId`` lower-case, and ARM (``az``, ARM templates, many metric
ids) keeps the real casing (``.../providers/Microsoft.StreamAnalytics/streamingjobs/myJob``).

* **The key** of a job is its resource id up to the job's name, lower-cased
  (:attr:`JobRef.job_id`): the same job name in two resource groups is two jobs, one job is
  one key in every casing. A record that names its job but has no resource id (an
  activity-log message's ``Resource Name:``, a bare CSV ``Resource``) has no id of its own.
* **The name** a record gives (:attr:`JobRef.name`) is the job's real casing when the record
  shows it: a name given on its own (``properties.JobName``, ``Resource Name:``) that matches
  the id, or the name in an ARM-cased id (its ``Microsoft.StreamAnalytics`` written neither
  all upper- nor all lower-case); otherwise (an upper- or lower-cased id, a bare ``Resource``)
  it is upper-cased, as ASA shows it.
* :func:`resolve_jobs` settles, over everything read in one aggregation, the key and the name
  shown for every (id, name) pair: a record without an id joins the one job of its name
  that has an id (none or several: it stays a job of its own, keyed by its name ignoring
  case); a job is shown under the best name seen for it (a name that is not all upper-case,
  from a record carrying the id before one from a record joined by name, then the smallest);
  two jobs that would be shown under the same name (ignoring case) are told apart by their
  resource group (or subscription and resource group) in brackets: ``myJob (rg-west)``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import NamedTuple

_JOB = re.compile(r"/STREAMINGJOBS/([^/\s]+)", re.IGNORECASE)
_NAMESPACE = re.compile(r"microsoft\.streamanalytics", re.IGNORECASE)
_SCOPE = re.compile(r"/subscriptions/([^/]+)/resourcegroups/([^/]+)/")


class JobRef(NamedTuple):
    """The job a record names: its key (the lower-cased resource id, if any) and its name."""

    job_id: str | None
    name: str | None


def _arm_cased(prefix: str) -> bool:
    """True when the part of a resource id before the job's name keeps ARM's casing."""
    namespace = _NAMESPACE.search(prefix)
    if namespace is None:
        return False
    text = namespace.group()
    return text not in (text.upper(), text.lower())


def job_ref(resource: str | None, named: str | None = None) -> JobRef:
    """The job of a record whose resource id (or bare job name) is ``resource`` and which
    names its job ``named`` on its own (``properties.JobName``, ``Resource Name:``)."""
    resource = (resource or "").strip()
    named = (named or "").strip() or None
    match = _JOB.search(resource)
    if match is not None:
        segment = match.group(1)
        job_id = resource[: match.end()].lower()
        if named is not None and named.lower() == segment.lower():
            return JobRef(job_id, named)
        return JobRef(job_id, segment if _arm_cased(resource[: match.start()]) else segment.upper())
    bare = resource.rstrip("/").rsplit("/", 1)[-1].strip()
    if bare:
        if named is not None and named.lower() == bare.lower():
            return JobRef(None, named)
        return JobRef(None, bare.upper())
    return JobRef(None, named)


def _qualifier(job_id: str, level: int) -> str:
    """How a job shown under a name another job has too is told apart: its resource group
    (``level`` 0), its subscription and resource group (1), or its whole id (2)."""
    scope = _SCOPE.search(job_id + "/")
    if scope is None or level >= 2:
        return job_id.rsplit("/streamingjobs/", 1)[0] or job_id
    return scope.group(2) if level == 0 else f"{scope.group(1)}/{scope.group(2)}"


def resolve_jobs(
    pairs: Iterable[tuple[str | None, str | None]],
) -> dict[tuple[str | None, str | None], tuple[str | None, str | None]]:
    """For each (job_id, name) pair read, the (job_id, name) it is aggregated under (see the
    module docstring). Every pair given is a key of the result; one without a name stays as
    it is."""
    pairs = set(pairs)
    ids_by_name: dict[str, set[str]] = defaultdict(set)
    for job_id, _name in pairs:
        if job_id is not None:
            ids_by_name[job_id.rsplit("/", 1)[-1]].add(job_id)
    key_of: dict[tuple[str | None, str | None], tuple[str, str]] = {}
    spellings: dict[tuple[str, str], set[tuple[bool, bool, str]]] = defaultdict(set)
    for job_id, name in pairs:
        if name is None:
            continue
        joined = False
        if job_id is None:
            ids = ids_by_name.get(name.lower(), set())
            if len(ids) == 1:
                job_id, joined = next(iter(ids)), True
        key = ("id", job_id) if job_id is not None else ("name", name.lower())
        key_of[(None if joined else job_id, name)] = key
        spellings[key].add((name == name.upper(), joined, name))
    shown = {key: min(names)[2] for key, names in spellings.items()}
    by_name: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key, name in shown.items():
        by_name[name.lower()].append(key)
    for sharing in by_name.values():
        with_id = [other for other in sharing if other[0] == "id"]
        if len(sharing) < 2 or not with_id:
            continue
        level = 0
        while level < 2 and len({_qualifier(k[1], level) for k in with_id}) < len(with_id):
            level += 1
        for other in with_id:
            shown[other] = f"{shown[other]} ({_qualifier(other[1], level)})"
    resolved = {pair: pair for pair in pairs}
    for pair, (kind, value) in key_of.items():
        resolved[pair] = (value if kind == "id" else None, shown[(kind, value)])
    return resolved


def join_jobs(
    pairs: Iterable[tuple[str | None, str | None]],
    resolved: Mapping[tuple[str | None, str | None], tuple[str | None, str | None]],
) -> dict[tuple[str | None, str | None], tuple[str | None, str | None]]:
    """For each (job_id, name) pair of a record that joins the jobs without naming them
    (a job lifecycle record, :mod:`diagnostics.logs.lifecycle`), the pair of its job among
    the ``resolved`` ones (:func:`resolve_jobs` of the data errors and metrics): the job with
    its id; without an id, the one job of that name (ignoring case). A pair that joins none
    is resolved among the others that join none, so such a record changes no job's name."""
    targets = set(resolved.values())
    by_id = {target[0]: target for target in targets if target[0] is not None}
    by_name: dict[str, set[tuple[str | None, str | None]]] = defaultdict(set)
    for job_id, name in targets:
        key = job_id.rsplit("/", 1)[-1] if job_id is not None else (name or "").lower()
        by_name[key].add((job_id, name))
    joined: dict[tuple[str | None, str | None], tuple[str | None, str | None]] = {}
    alone = []
    for pair in set(pairs):
        job_id, name = pair
        if job_id is not None and job_id in by_id:
            joined[pair] = by_id[job_id]
        elif job_id is None and name is not None and len(by_name.get(name.lower(), ())) == 1:
            joined[pair] = next(iter(by_name[name.lower()]))
        else:
            alone.append(pair)
    return joined | resolve_jobs(alone)
