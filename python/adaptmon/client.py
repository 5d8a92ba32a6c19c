"""A thin HTTP client for the adaptmon service (standard library only).

    from adaptmon.client import Client, ApiError

    am = Client("http://127.0.0.1:8080", token="…")
    am.create_session("en", "fr", id="demo")
    r = am.post_segment("demo", "1", translation="Le chat", hypothesis="Un chat",
                        source="The cat")
    print(r["totals"]["default"]["r0"])
    for ev in am.events("demo", after=0):
        print(ev.event, ev.id, ev.data)

Every method maps to one operation of openapi.yaml (the API contract) and
returns the decoded JSON answer as plain dicts and lists, exactly as the
server sent it; nothing is renamed or recomputed here, so the numbers are the
service's. An error answer (RFC 9457 problem+json) raises ApiError with the
problem's status, type, title and detail.

Retries. A request the server refused with 429 or 503 *and* a Retry-After
header changed nothing (openapi.yaml: "nothing was stored; retry"), so it is
sent again after that many seconds, whatever the method, up to `retries`
times (when the wait is at most `max_retry_wait`). A request that failed in
transport (connection reset, a kept-alive connection the server closed, a
truncated streamed body, a timeout) is sent again only when repeating it
cannot count twice: GET, HEAD, segment PUT and DELETE, and segment POSTs,
which carry the client's segment `id` (the service answers a re-post of a
stored id with the same body with its stored result, 200). Session creation,
glossary uploads, imports and rescores are not repeated after a transport
failure: the first attempt may have been applied.

This module imports nothing from the rest of the adaptmon package, so it can
be copied or loaded on its own. A Client may be shared by threads: each
thread uses its own kept-alive connection.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["Client", "ApiError", "Event"]

Headers = List[Tuple[str, str]]
# on_response(method, path, status, headers, body): called with every answer
ResponseHook = Callable[[str, str, int, Headers, bytes], None]

PROBLEM_BASE = "https://adaptmon.dev/problems/"

# Transport failures after which an idempotent request is sent again.
_TRANSPORT_ERRORS = (http.client.RemoteDisconnected, http.client.IncompleteRead,
                     http.client.CannotSendRequest, http.client.ResponseNotReady,
                     http.client.BadStatusLine, ConnectionError, socket.timeout, TimeoutError)


class ApiError(Exception):
    """An error answer of the service (HTTP status >= 400).

    status: the HTTP status; type: the problem's stable type URI (None when the
    body was no problem document); title, detail: the problem's texts;
    problem: the whole decoded problem (with `field`, `line`, `limit`, `cap`,
    `max`, `request_id`… where the server gave them), {} without one;
    retry_after: the Retry-After header in seconds, or None; headers: the
    answer's headers as (name, value) pairs."""

    def __init__(self, status: int, problem: Mapping[str, Any], headers: Headers,
                 method: str = "", path: str = "") -> None:
        self.status = status
        self.problem: Dict[str, Any] = dict(problem)
        t = problem.get("type")
        self.type: Optional[str] = t if isinstance(t, str) else None
        title = problem.get("title")
        self.title: str = title if isinstance(title, str) else http.client.responses.get(status, "")
        detail = problem.get("detail")
        self.detail: str = detail if isinstance(detail, str) else ""
        self.headers = headers
        self.retry_after = _retry_after(_header(headers, "Retry-After"))
        self.method = method
        self.path = path
        super().__init__("%s %s: %d %s%s" % (method, path, status, self.title,
                                             ": " + self.detail if self.detail else ""))

    @property
    def kind(self) -> Optional[str]:
        """The problem type without its base URI (e.g. "not-found"), or None."""
        if self.type and self.type.startswith(PROBLEM_BASE):
            return self.type[len(PROBLEM_BASE):]
        return self.type


class Event:
    """One Server-Sent Event of a session's stream.

    event: "segment", "segment-deleted", "rescore" or "deleted" (the
    `event:` field; "message" when absent); id: the `id:` field (a segment's
    seq as text), or None; data: the `data:` JSON decoded (the raw text when
    it is not JSON)."""

    __slots__ = ("event", "data", "id")

    def __init__(self, event: str, data: Any, id: Optional[str] = None) -> None:
        self.event = event
        self.data = data
        self.id = id

    def __repr__(self) -> str:
        return "Event(event=%r, id=%r, data=%r)" % (self.event, self.id, self.data)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Event) and (self.event, self.id, self.data)
                == (other.event, other.id, other.data))


def _header(headers: Headers, name: str) -> Optional[str]:
    name = name.lower()
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds (delta-seconds form; the service sends no
    HTTP-date), None when absent or unreadable."""
    if value is None:
        return None
    try:
        secs = float(value.strip())
    except ValueError:
        return None
    return secs if secs >= 0 else None


def _quote(segment: str) -> str:
    """One path segment, percent-encoded (ids are [A-Za-z0-9._-], words are
    any text)."""
    return urllib.parse.quote(str(segment), safe="")


def _drop_none(d: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class _Response:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Headers, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Dict[str, Any]:
        """The body as a JSON object (every JSON answer of the API is one)."""
        doc = json.loads(self.body.decode("utf-8"))
        if not isinstance(doc, dict):
            raise ValueError("adaptmon: expected a JSON object, got %s" % type(doc).__name__)
        return doc

    @property
    def content_type(self) -> str:
        return (_header(self.headers, "Content-Type") or "").split(";")[0].strip().lower()


class Client:
    """A client of one adaptmon server.

    url: the server's base URL (http:// or https://, an optional path prefix
    when a proxy serves it under one); token: the bearer token (the write
    token for writes, the read or write token for reads), None without
    authentication; timeout: seconds a request may wait for the server (for
    connecting and for each read); retries: how many times a request is sent
    again (see the module's docstring); max_retry_wait: the longest
    Retry-After honoured (a longer one raises the ApiError at once); on_response:
    called with (method, path, status, headers, body) for every answer
    received (logging, tests), body b"" for event streams."""

    def __init__(self, url: str, token: Optional[str] = None, *, timeout: float = 60.0,
                 retries: int = 2, max_retry_wait: float = 30.0,
                 on_response: Optional[ResponseHook] = None) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("adaptmon Client: url must be http(s)://host[:port][/prefix], got %r"
                             % url)
        if retries < 0 or timeout <= 0 or max_retry_wait < 0:
            raise ValueError("adaptmon Client: retries and max_retry_wait must be >= 0, "
                             "timeout > 0")
        self.url = url
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self.on_response = on_response
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port or (443 if self._https else 80)
        self._prefix = u.path.rstrip("/")
        self._local = threading.local()

    # ---- connection and transport ----------------------------------------

    def _new_conn(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _conn(self) -> http.client.HTTPConnection:
        """This thread's kept-alive connection (opened on first use)."""
        c: Optional[http.client.HTTPConnection] = getattr(self._local, "conn", None)
        if c is None:
            c = self._new_conn(self.timeout)
            self._local.conn = c
        return c

    def _drop_conn(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None

    def close(self) -> None:
        """Closes this thread's connection (a later request opens a new one)."""
        self._drop_conn()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _headers(self, extra: Optional[Mapping[str, str]]) -> Dict[str, str]:
        h = {"Accept": "application/json, application/problem+json;q=0.9, */*;q=0.5"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if extra:
            h.update(extra)
        return h

    def _path(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        q = _drop_none(query or {})
        if q:
            path += "?" + urllib.parse.urlencode(
                {k: (("true" if v else "false") if isinstance(v, bool) else v)
                 for k, v in q.items()})
        return self._prefix + path

    def _send_once(self, method: str, path: str, body: Optional[bytes],
                   headers: Dict[str, str], fresh: bool) -> _Response:
        """One exchange on this thread's connection; fresh: on a new one (a
        kept-alive connection the server closed while idle fails the request
        before the server saw it, which a non-idempotent request could not
        tell from a failure after)."""
        if fresh:
            self._drop_conn()
        conn = self._conn()
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
        except BaseException:
            # the connection's state is unknown: never reuse it
            self._drop_conn()
            raise
        resp = _Response(r.status, r.getheaders(), data)
        if r.will_close:
            self._drop_conn()
        if self.on_response is not None:
            self.on_response(method, path, resp.status, resp.headers, data)
        return resp

    def _request(self, method: str, path: str, *, body: Optional[bytes] = None,
                 ctype: Optional[str] = None, headers: Optional[Mapping[str, str]] = None,
                 idempotent: Optional[bool] = None, ok: Sequence[int] = ()) -> _Response:
        """Sends one request (path already prefixed, with its query), retrying
        as the module's docstring says; returns a 2xx/3xx answer or a status
        listed in ok, raises ApiError for any other."""
        h = self._headers(headers)
        if ctype is not None:
            h["Content-Type"] = ctype
        if idempotent is None:
            idempotent = method in ("GET", "HEAD", "PUT", "DELETE")
        attempt = 0
        while True:
            try:
                resp = self._send_once(method, path, body, h, fresh=not idempotent)
            except _TRANSPORT_ERRORS:
                if not idempotent or attempt >= self.retries:
                    raise
                time.sleep(min(0.1 * (2 ** attempt), 2.0))
                attempt += 1
                continue
            if resp.status < 400 or resp.status in ok:
                return resp
            err = self._error(method, path, resp)
            if (resp.status in (429, 503) and err.retry_after is not None
                    and err.retry_after <= self.max_retry_wait and attempt < self.retries):
                time.sleep(err.retry_after)
                attempt += 1
                continue
            raise err

    @staticmethod
    def _error(method: str, path: str, resp: _Response) -> ApiError:
        problem: Dict[str, Any] = {}
        if resp.content_type in ("application/problem+json", "application/json"):
            try:
                doc = resp.json()
            except ValueError:
                doc = None
            if isinstance(doc, dict):
                problem = doc
        if "detail" not in problem and "reason" in problem:
            # /readyz's 503 is {"status": "…", "reason": "…"}, no problem document
            problem = dict(problem, detail=str(problem["reason"]))
        return ApiError(resp.status, problem, resp.headers, method, path)

    def _json(self, method: str, path: str, payload: Any = None, *,
              query: Optional[Mapping[str, Any]] = None,
              idempotent: Optional[bool] = None) -> Dict[str, Any]:
        body = None if payload is None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        r = self._request(method, self._path(path, query), body=body,
                          ctype="application/json" if body is not None else None,
                          idempotent=idempotent)
        return r.json()

    @staticmethod
    def _s(session: str) -> str:
        return "/v1/sessions/" + _quote(session)

    # ---- service --------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """GET /healthz: {"status": "ok"} while the process answers."""
        return self._json("GET", "/healthz")

    def ready(self) -> Dict[str, Any]:
        """GET /readyz: {"status", "schema_version"} when ready; a 503
        (starting, stopping, database unusable) raises ApiError whose detail
        is the server's `reason`."""
        return self._json("GET", "/readyz")

    def openapi(self) -> str:
        """GET /openapi.yaml: the API contract the server implements (YAML text)."""
        return self._request("GET", self._path("/openapi.yaml")).body.decode("utf-8")

    # ---- sessions -------------------------------------------------------------

    def create_session(self, source_lang: str, target_lang: str, *, id: Optional[str] = None,
                       name: Optional[str] = None, options: Optional[Mapping[str, Any]] = None,
                       glossary: Optional[Sequence[Mapping[str, Any]]] = None,
                       stopword_list: Optional[Sequence[str]] = None,
                       metadata: Optional[Mapping[str, Any]] = None,
                       systems: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        """POST /v1/sessions: creates a session and returns it (201). The
        options (openapi.yaml Options) are fixed for the session's life;
        systems declares the systems every segment carries. A known id is a
        409 ApiError (kind "conflict")."""
        body = _drop_none({"id": id, "name": name, "source_lang": source_lang,
                           "target_lang": target_lang,
                           "options": dict(options) if options is not None else None,
                           "glossary": list(glossary) if glossary is not None else None,
                           "stopword_list": list(stopword_list) if stopword_list is not None else None,
                           "metadata": dict(metadata) if metadata is not None else None,
                           "systems": list(systems) if systems is not None else None})
        return self._json("POST", "/v1/sessions", body, idempotent=False)

    def list_sessions(self, *, limit: Optional[int] = None,
                      after: Optional[str] = None) -> Dict[str, Any]:
        """GET /v1/sessions: one page {"sessions", "next", "total"}, ordered
        by id; pass the page's `next` as after for the following page."""
        return self._json("GET", "/v1/sessions", query={"limit": limit, "after": after})

    def iter_sessions(self, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every session, following the `next` cursors page by page."""
        after: Optional[str] = None
        while True:
            page = self.list_sessions(limit=page_size, after=after)
            yield from page["sessions"]
            after = page.get("next")
            if after is None:
                return

    def get_session(self, session: str) -> Dict[str, Any]:
        """GET /v1/sessions/{id}: the session (options as they run, signature,
        segments, incarnation…)."""
        return self._json("GET", self._s(session))

    def delete_session(self, session: str) -> None:
        """DELETE /v1/sessions/{id}: deletes the session and its whole
        history (an unknown id is a 404 ApiError)."""
        self._delete(self._s(session))

    def _delete(self, path: str) -> None:
        """DELETE with retries; a retry (after the first attempt's answer was
        lost) that finds the resource gone counts as done."""
        try:
            self._request("DELETE", self._path(path), idempotent=False)
            return
        except _TRANSPORT_ERRORS:
            if self.retries == 0:
                raise
        try:
            self._request("DELETE", self._path(path))
        except ApiError as e:
            if e.status != 404:
                raise

    # ---- glossary -------------------------------------------------------------

    def put_glossary(self, session: str,
                     glossary: Union[Sequence[Mapping[str, Any]], Mapping[str, Any], str, bytes],
                     *, content_type: Optional[str] = None) -> Dict[str, Any]:
        """PUT /v1/sessions/{id}/glossary: replaces the glossary (a new
        version; it applies to segments posted after it) and returns
        {"entries", "skipped", "version", "format"…}. glossary: a list of
        entries ({source, targets | target, case_sensitive, forbidden, id}) or
        {"entries": […]} sent as JSON; or the text of a file (str or bytes)
        with content_type "text/csv", "text/tab-separated-values" or
        "application/x-tbx" (required then). Not repeated after a transport
        failure (each PUT makes a version)."""
        if isinstance(glossary, (str, bytes)):
            if content_type is None:
                raise ValueError("put_glossary: a glossary given as text needs content_type "
                                 "(text/csv, text/tab-separated-values or application/x-tbx)")
            data = glossary.encode("utf-8") if isinstance(glossary, str) else glossary
        else:
            payload = dict(glossary) if isinstance(glossary, Mapping) else list(glossary)
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            content_type = content_type or "application/json"
        r = self._request("PUT", self._path(self._s(session) + "/glossary"), body=data,
                          ctype=content_type, idempotent=False)
        return r.json()

    def get_glossary(self, session: str) -> Dict[str, Any]:
        """GET /v1/sessions/{id}/glossary: {"version", "count", "entries"}."""
        return self._json("GET", self._s(session) + "/glossary")

    def delete_glossary(self, session: str) -> None:
        """DELETE /v1/sessions/{id}/glossary: removes the glossary (a new,
        empty version for the segments posted after it)."""
        self._request("DELETE", self._path(self._s(session) + "/glossary"), idempotent=False)

    # ---- segments -------------------------------------------------------------

    @staticmethod
    def segment(id: str, translation: str, *, hypothesis: Optional[str] = None,
                hypotheses: Optional[Mapping[str, str]] = None, source: Optional[str] = None,
                references: Optional[Sequence[str]] = None,
                terms: Optional[Sequence[Mapping[str, Any]]] = None,
                metadata: Optional[Mapping[str, Any]] = None,
                translator: Optional[str] = None) -> Dict[str, Any]:
        """A SegmentRequest as a dict (for post_batch): exactly one of
        hypothesis (the one system) and hypotheses ({system: text})."""
        if (hypothesis is None) == (hypotheses is None):
            raise ValueError("a segment needs exactly one of hypothesis and hypotheses")
        return _drop_none({"id": id, "source": source, "hypothesis": hypothesis,
                           "hypotheses": dict(hypotheses) if hypotheses is not None else None,
                           "translation": translation,
                           "references": list(references) if references is not None else None,
                           "terms": list(terms) if terms is not None else None,
                           "metadata": dict(metadata) if metadata is not None else None,
                           "translator": translator})

    def post_segment(self, session: str, id: str, translation: str, *,
                     hypothesis: Optional[str] = None,
                     hypotheses: Optional[Mapping[str, str]] = None,
                     source: Optional[str] = None, references: Optional[Sequence[str]] = None,
                     terms: Optional[Sequence[Mapping[str, Any]]] = None,
                     metadata: Optional[Mapping[str, Any]] = None,
                     translator: Optional[str] = None) -> Dict[str, Any]:
        """POST /v1/sessions/{id}/segments: scores and stores one confirmed
        segment; returns its SegmentResult (seq, scores per system, running
        totals). Re-posting the same id with the same body answers the stored
        result and counts nothing twice (so this is retried safely); another
        body for a stored id is a 409 ApiError (use put_segment)."""
        seg = self.segment(id, translation, hypothesis=hypothesis, hypotheses=hypotheses,
                           source=source, references=references, terms=terms,
                           metadata=metadata, translator=translator)
        return self._json("POST", self._s(session) + "/segments", seg, idempotent=True)

    def post_batch(self, session: str, segments: Iterable[Mapping[str, Any]], *,
                   ndjson: bool = False, raise_on_failure: bool = False) -> Dict[str, Any]:
        """POST /v1/sessions/{id}/segments with a batch: the segments (dicts
        as segment() builds them, each with its id) are posted in order as
        that many single POSTs would be. Returns the BatchResult {"created",
        "unchanged", "failed", "not_attempted", "items"}; the batch stops at
        the first item that fails (`failed` is its index, the items before it
        are stored). With raise_on_failure, such a failure raises the failed
        item's problem as an ApiError (the partial result is in its
        `problem["batch"]`). ndjson sends application/x-ndjson (one object a
        line) instead of a JSON array. Retried safely: the stored items
        answer 200."""
        items = [dict(s) for s in segments]
        for i, s in enumerate(items):
            if "id" not in s:
                raise ValueError("post_batch: item %d has no id (ids make a batch idempotent)" % i)
        if ndjson:
            data = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in items).encode("utf-8")
            ctype = "application/x-ndjson"
        else:
            data = json.dumps(items, ensure_ascii=False).encode("utf-8")
            ctype = "application/json"
        path = self._path(self._s(session) + "/segments")
        res = self._request("POST", path, body=data, ctype=ctype, idempotent=True).json()
        if raise_on_failure and res.get("failed") is not None:
            item = res["items"][res["failed"]]
            problem = dict(item.get("problem") or {}, batch=res)
            raise ApiError(int(item.get("status") or 0), problem, [], "POST", path)
        return res

    def put_segment(self, session: str, id: str, translation: str, *,
                    hypothesis: Optional[str] = None,
                    hypotheses: Optional[Mapping[str, str]] = None,
                    source: Optional[str] = None, references: Optional[Sequence[str]] = None,
                    terms: Optional[Sequence[Mapping[str, Any]]] = None,
                    metadata: Optional[Mapping[str, Any]] = None,
                    translator: Optional[str] = None) -> Dict[str, Any]:
        """PUT /v1/sessions/{id}/segments/{sid}: replaces segment id (an edit)
        and recomputes the history after it, or appends it when the id is new
        (an upsert); returns the segment's new SegmentResult."""
        seg = self.segment(id, translation, hypothesis=hypothesis, hypotheses=hypotheses,
                           source=source, references=references, terms=terms,
                           metadata=metadata, translator=translator)
        return self._json("PUT", self._s(session) + "/segments/" + _quote(id), seg)

    def get_segment(self, session: str, id: str) -> Dict[str, Any]:
        """GET /v1/sessions/{id}/segments/{sid}: the stored result and request."""
        return self._json("GET", self._s(session) + "/segments/" + _quote(id))

    def delete_segment(self, session: str, id: str) -> None:
        """DELETE /v1/sessions/{id}/segments/{sid}: removes the segment and
        recomputes the later ones (their seqs stay)."""
        self._delete(self._s(session) + "/segments/" + _quote(id))

    def list_segments(self, session: str, *, after: Optional[int] = None,
                      limit: Optional[int] = None) -> Dict[str, Any]:
        """GET /v1/sessions/{id}/segments: one page of the timeline
        {"segments", "next", "total"} covering seqs after+1 … after+limit;
        pass `next` as after for the following page."""
        return self._json("GET", self._s(session) + "/segments",
                          query={"after": after, "limit": limit})

    def iter_segments(self, session: str, *, after: int = 0,
                      page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every stored segment with seq > after, in posting order."""
        cur: Optional[int] = after
        while cur is not None:
            page = self.list_segments(session, after=cur, limit=page_size)
            yield from page["segments"]
            cur = page.get("next")

    def check(self, session: str, source: str, *, hypothesis: Optional[str] = None,
              hypotheses: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
        """POST /v1/sessions/{id}/check: previews a hypothesis before it is
        confirmed (terms used or missing, the adaptation signal); changes
        nothing, so it is retried like a GET."""
        body = _drop_none({"source": source, "hypothesis": hypothesis,
                           "hypotheses": dict(hypotheses) if hypotheses is not None else None})
        return self._json("POST", self._s(session) + "/check", body, idempotent=True)

    def rescore(self, session: str) -> Dict[str, Any]:
        """POST /v1/sessions/{id}/rescore: scores every segment again with the
        current glossary; returns the new totals."""
        r = self._request("POST", self._path(self._s(session) + "/rescore"), idempotent=False)
        return r.json()

    def import_xliff(self, session: str, xliff: bytes, *,
                     xliff_mt: Optional[bytes] = None) -> Dict[str, Any]:
        """POST /v1/sessions/{id}/import: posts the confirmed units of an
        XLIFF 1.2/2.x file (bytes) as segments; with xliff_mt (the same
        project pre-translated by MT) the two-file form. Returns the summary
        {"imported", "already_present", "skipped", "skips"…}."""
        if xliff_mt is None:
            data, ctype = xliff, "application/xliff+xml"
        else:
            boundary = "adaptmon-%d-%d" % (time.time_ns(), threading.get_ident())
            parts = []
            for name, content in (("xliff", xliff), ("xliff_mt", xliff_mt)):
                if boundary.encode("ascii") in content:
                    raise ValueError("import_xliff: the file contains the multipart boundary")
                parts.append(b"--" + boundary.encode("ascii") + b"\r\n"
                             + b'Content-Disposition: form-data; name="' + name.encode("ascii")
                             + b'"; filename="' + name.encode("ascii") + b'.xlf"\r\n'
                             + b"Content-Type: application/xliff+xml\r\n\r\n" + content + b"\r\n")
            data = b"".join(parts) + b"--" + boundary.encode("ascii") + b"--\r\n"
            ctype = "multipart/form-data; boundary=" + boundary
        # a re-import counts nothing twice (unit ids are segment ids)
        r = self._request("POST", self._path(self._s(session) + "/import"), body=data,
                          ctype=ctype, idempotent=True)
        return r.json()

    # ---- metrics and exports ----------------------------------------------------

    def metrics(self, session: str, *, ci: Optional[float] = None) -> Dict[str, Any]:
        """GET /v1/sessions/{id}/metrics: the totals per system, the relative
        differences to the baseline system and, with ci (a confidence level,
        0 < ci < 1, e.g. 0.95), `confidence`: the paired bootstrap intervals."""
        q = {"ci": None if ci is None else _ci_text(ci)}
        return self._json("GET", self._s(session) + "/metrics", query=q)

    def curve(self, session: str, *, points: Optional[int] = None, window: Optional[int] = None,
              wo: Optional[int] = None, ci: Optional[bool] = None) -> Dict[str, Any]:
        """GET /v1/sessions/{id}/curve: the running (window=0) or moving-window
        series per system, downsampled to at most `points`; ci=True adds the
        Wilson 95% bands."""
        q = {"points": points, "window": window, "wo": wo,
             "ci": None if ci is None else int(bool(ci))}
        return self._json("GET", self._s(session) + "/curve", query=q)

    def plot_svg(self, session: str, *, points: Optional[int] = None,
                 window: Optional[int] = None, wo: Optional[int] = None,
                 ci: Optional[bool] = None) -> str:
        """GET /v1/sessions/{id}/plot.svg: the curves as an SVG document."""
        q = {"points": points, "window": window, "wo": wo,
             "ci": None if ci is None else int(bool(ci))}
        return self._request("GET", self._path(self._s(session) + "/plot.svg", q)).body.decode(
            "utf-8")

    def word(self, session: str, word: str) -> Dict[str, Any]:
        """GET /v1/sessions/{id}/vocabulary/{word}: the word's history."""
        return self._json("GET", self._s(session) + "/vocabulary/" + _quote(word))

    def export(self, session: str, format: str = "json") -> Union[Dict[str, Any], str]:
        """GET /v1/sessions/{id}/export: the whole session, as a dict for
        "json", as text for "csv" and "tmx". A transfer cut short (a replay
        committed while it streamed) is asked again."""
        if format not in ("json", "csv", "tmx"):
            raise ValueError("export: format must be json, csv or tmx, got %r" % (format,))
        r = self._request("GET", self._path(self._s(session) + "/export", {"format": format}))
        return r.json() if format == "json" else r.body.decode("utf-8")

    # ---- background vocabularies ---------------------------------------------

    def put_vocabulary(self, name: str, data: Union[str, bytes], *, tmx: bool = False,
                       lang: Optional[str] = None, source_lang: Optional[str] = None,
                       tokenizer: Optional[str] = None) -> Dict[str, Any]:
        """PUT /v1/vocabularies/{name}: stores a background vocabulary, as
        `count word` lines (text) or, with tmx=True, a TMX memory whose `lang`
        side is counted."""
        body = data.encode("utf-8") if isinstance(data, str) else data
        q = {"lang": lang, "source_lang": source_lang, "tokenizer": tokenizer}
        r = self._request("PUT", self._path("/v1/vocabularies/" + _quote(name), q), body=body,
                          ctype="application/x-tmx+xml" if tmx else "text/plain; charset=utf-8")
        return r.json()

    def get_vocabulary(self, name: str) -> Dict[str, Any]:
        """GET /v1/vocabularies/{name}: the vocabulary's size and provenance."""
        return self._json("GET", "/v1/vocabularies/" + _quote(name))

    def delete_vocabulary(self, name: str) -> None:
        """DELETE /v1/vocabularies/{name}."""
        self._delete("/v1/vocabularies/" + _quote(name))

    # ---- events -----------------------------------------------------------------

    def events(self, session: str, *, after: Optional[int] = None,
               last_event_id: Optional[str] = None, incarnation: Optional[int] = None,
               reconnect: bool = True, read_timeout: Optional[float] = 60.0,
               max_reconnects: Optional[int] = None) -> Iterator[Event]:
        """GET /v1/sessions/{id}/events: the session's live Server-Sent Events
        as an iterator of Event (ping comments are skipped).

        after: also replay the stored segments with seq > after first (a
        first connection); last_event_id: resume after that event id.
        incarnation: refuse (404) to resume a deleted and re-created session.
        With reconnect, a stream that ends (the server's `reconnect` event
        after --stream-max-age, a dropped connection, no byte for
        read_timeout seconds — the server pings every --sse-heartbeat
        seconds, 15 by default) is opened again with `Last-Event-ID` set to
        the last id seen, after the server's `retry:` delay (or a 429/503's
        Retry-After), so no segment is missed; at most max_reconnects times in
        a row without an event (None: no limit). The iterator ends after the
        `deleted` event (the session was deleted), or when the stream ends
        and reconnect is False. Close the iterator (or leave the loop) to
        close the connection. A refusal (404, 401…) raises ApiError."""
        last_id = last_event_id
        retry_ms = 2000
        failures = 0        # reconnections in a row without an event
        connected = False   # a first connection that fails raises (a wrong URL, a dead server)
        while True:
            # `after` only until an id was seen; Last-Event-ID wins then
            q = {"after": after if last_id is None else None, "incarnation": incarnation}
            path = self._path(self._s(session) + "/events", q)
            h = self._headers({"Accept": "text/event-stream"})
            if last_id is not None:
                h["Last-Event-ID"] = last_id
            wait = retry_ms / 1000.0
            ended_by_server = False
            conn = self._new_conn(self.timeout)
            try:
                try:
                    conn.request("GET", path, headers=h)
                    r = conn.getresponse()
                except OSError:
                    # refused, reset, timed out (http.client's errors are OSErrors or
                    # HTTPExceptions; the latter are not caught: a broken server)
                    if (not reconnect or not connected
                            or (max_reconnects is not None and failures >= max_reconnects)):
                        raise
                    failures += 1
                    time.sleep(wait)
                    continue
                if r.status != 200:
                    body = r.read()
                    resp = _Response(r.status, r.getheaders(), body)
                    if self.on_response is not None:
                        self.on_response("GET", path, r.status, resp.headers, body)
                    err = self._error("GET", path, resp)
                    if (reconnect and r.status in (429, 503) and err.retry_after is not None
                            and err.retry_after <= self.max_retry_wait
                            and (max_reconnects is None or failures < max_reconnects)):
                        failures += 1
                        time.sleep(err.retry_after)
                        continue
                    raise err
                if self.on_response is not None:
                    self.on_response("GET", path, r.status, r.getheaders(), b"")
                connected = True
                if conn.sock is not None:
                    conn.sock.settimeout(read_timeout)
                try:
                    for ev, retry in _parse_sse(r):
                        if ev is None:
                            retry_ms = retry if retry is not None else retry_ms
                            continue
                        failures = 0
                        if ev.id is not None:
                            last_id = ev.id
                        if ev.event == "reconnect":
                            # the server ends the stream (max age): resume from its id
                            if isinstance(ev.data, dict) and isinstance(ev.data.get("retry_ms"), int):
                                retry_ms = ev.data["retry_ms"]
                            wait = retry_ms / 1000.0
                            ended_by_server = True
                            break
                        yield ev
                        if ev.event == "deleted":
                            return
                except (OSError, http.client.HTTPException):
                    # dropped, truncated or silent for read_timeout
                    if not reconnect:
                        raise
            finally:
                conn.close()
            if not reconnect:
                return
            if ended_by_server:
                # not a failure: the server asked for it (and sent its id)
                time.sleep(wait)
                continue
            if max_reconnects is not None and failures >= max_reconnects:
                raise ConnectionError("adaptmon events: the stream of %r ended %d times in a "
                                      "row without an event" % (session, failures + 1))
            failures += 1
            time.sleep(wait)


def _ci_text(ci: float) -> str:
    """The ci query value: 0 < ci < 1 written with at most 6 characters."""
    if not 0 < ci < 1:
        raise ValueError("ci must be a confidence level between 0 and 1, got %r" % (ci,))
    text = ("%.4f" % ci).rstrip("0")
    if float(text) != ci:
        raise ValueError("ci %r has more than 4 decimals (the server reads at most 6 characters)"
                         % (ci,))
    return text


def _parse_sse(r: http.client.HTTPResponse) -> Iterator[Tuple[Optional[Event], Optional[int]]]:
    """Reads a text/event-stream (WHATWG HTML §9.2.6) and yields (event, None)
    per dispatched event and (None, ms) per valid `retry:` field; returns at
    the end of the stream."""
    data: List[str] = []
    event = ""
    ev_id: Optional[str] = None
    while True:
        raw = r.readline()
        if not raw:
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line == "":
            if data or event:
                text = "\n".join(data)
                try:
                    value: Any = json.loads(text) if text else None
                except ValueError:
                    value = text
                yield Event(event or "message", value, ev_id), None
            data, event, ev_id = [], "", None
            continue
        if line.startswith(":"):
            continue
        field, _, value_s = line.partition(":")
        if value_s.startswith(" "):
            value_s = value_s[1:]
        if field == "data":
            data.append(value_s)
        elif field == "event":
            event = value_s
        elif field == "id":
            if "\0" not in value_s:
                ev_id = value_s
        elif field == "retry":
            if value_s.isdigit():
                yield None, int(value_s)
