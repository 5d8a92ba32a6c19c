"""adaptmon in Python: R0/R1 recall, terminology, BLEU, chrF, chrF++ and TER of
adaptive machine translation, with the same numbers as ``adaptmon score --json``.

Every function here runs the command line's own scoring code in process (the
extension ``adaptmon._core`` links it): the arguments are turned into
``adaptmon score`` options, the texts into temporary files, and the JSON the
command prints into Python objects. :class:`Session` keeps a session open in
the extension (the history in memory, each add scored alone by the CLI's
per-segment step) and the readers (:func:`read_plain`, :func:`read_sgml`,
:func:`read_xliff`, :func:`read_tmx`, :func:`read_glossary`) run the CLI's
loading code. Nothing is scored or parsed in Python, so nothing can drift
from the CLI::

    import adaptmon
    res = adaptmon.corpus_score(["le chat dort"], ["le chat dort bien"],
                                target_lang="fr")
    res.systems["hyp"].r0.score, res.systems["hyp"].bleu

Errors of the input or options raise :class:`AdaptmonError` carrying the
CLI's message. The GIL is released while the core runs and calls on several
threads run in parallel (each captures its output in memory streams of its
own; the process's stdout and stderr are never touched), see docs/python.md.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core

__all__ = [
    "AdaptmonError", "Recall", "SystemScores", "Result", "Session",
    "corpus_score", "score_files", "paired_bootstrap", "paired_randomization",
    "Segment", "Input", "GlossaryEntry", "read_plain", "read_sgml", "read_xliff", "read_tmx",
    "read_glossary", "__version__",
]
__version__: str = _core.VERSION

try:  # written by another module owner; absent in some development trees
    from .client import ApiError, Client  # noqa: F401
    __all__ += ["Client", "ApiError"]
except ImportError:  # pragma: no cover - depends on the tree
    pass

Hypotheses = Union[Sequence[str], Mapping[str, Sequence[str]]]
PathLike = Union[str, "os.PathLike[str]"]


class AdaptmonError(ValueError):
    """Bad input or options: ``str(e)`` is the CLI's message (without the
    ``adaptmon score:`` prefix), ``e.status`` its exit status (1 bad input,
    2 usage error)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Recall:
    """One recall ratio: hits of total, score = hits / total (None when
    total is 0)."""
    hits: int
    total: int
    score: Optional[float]


@dataclass(frozen=True)
class SystemScores:
    """One system's corpus scores. ``raw`` is the CLI's JSON object for the
    system (every number it prints, e.g. bleu_stats, recall R_k)."""
    r0: Recall
    r1: Recall
    r01: Recall
    terms: Dict[str, Any]
    bleu: Optional[float]
    chrf: Optional[float]
    chrfpp: Optional[float]
    ter: Optional[float]
    one_minus_term: Optional[float]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "SystemScores":
        def rec(key: str) -> Recall:
            r = d.get(key) or {"hits": 0, "total": 0, "score": None}
            return Recall(r["hits"], r["total"], r["score"])
        return cls(rec("r0"), rec("r1"), rec("r01"), dict(d.get("terms") or {}),
                   d.get("bleu"), d.get("chrf"), d.get("chrfpp"), d.get("ter"),
                   d.get("one_minus_term"), dict(d))


@dataclass(frozen=True)
class Result:
    """What ``adaptmon score --json`` prints, as objects.

    ``systems`` maps each system name to its :class:`SystemScores`;
    ``signature`` is adaptmon's metric signature and ``sacrebleu`` the
    sacreBLEU signatures of BLEU, chrF, chrF++ and TER; ``per_segment``,
    ``significance`` and ``exposures`` are the CLI's JSON (None when not
    asked); ``json`` is the whole parsed output."""
    signature: str
    segments: int
    systems: Dict[str, SystemScores]
    sacrebleu: Dict[str, str]
    per_segment: Optional[List[Dict[str, Any]]]
    significance: Optional[Dict[str, Any]]
    json: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Result":
        systems = {k: SystemScores.from_json(v) for k, v in (d.get("systems") or {}).items()}
        return cls(d.get("signature", ""), d.get("segments", 0), systems,
                   dict(d.get("sacrebleu") or {}), d.get("per_segment"),
                   d.get("significance"), d)


def _run(args: Sequence[str]) -> Tuple[str, str]:
    """Runs ``adaptmon score ARGS`` in process; returns (stdout, stderr) or
    raises AdaptmonError with the CLI's message."""
    status, out, err = _core.run(list(args))
    if status != 0:
        raise AdaptmonError(_cli_message(err, status), status)
    return out, err


def _option_args(options: Mapping[str, Any]) -> List[str]:
    """Keyword options as CLI options: name_x=v -> --name-x v, True -> the
    flag alone, False/None -> nothing, a list -> the option repeated."""
    args: List[str] = []
    for name, val in options.items():
        flag = "--" + name.replace("_", "-")
        if val is None or val is False:
            continue
        if val is True:
            args.append(flag)
        elif isinstance(val, (list, tuple)):
            for v in val:
                args += [flag, str(v)]
        else:
            args += [flag, str(val)]
    return args


def _write_lines(dirname: str, name: str, lines: Iterable[str], what: str) -> Tuple[str, int]:
    """Writes one segment a line (plain format); returns (path, count).
    A segment containing a line break cannot be written so: ValueError."""
    path = os.path.join(dirname, name)
    n = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for seg in lines:
            if not isinstance(seg, str):
                raise TypeError("%s: segment %d is %s, not str" % (what, n + 1, type(seg).__name__))
            if "\n" in seg or "\r" in seg:
                raise ValueError("%s: segment %d contains a line break" % (what, n + 1))
            f.write(seg + "\n")
            n += 1
    return path, n


def _systems(hypotheses: Hypotheses) -> Dict[str, Sequence[str]]:
    if isinstance(hypotheses, Mapping):
        if not hypotheses:
            raise ValueError("hypotheses: no system")
        for name in hypotheses:
            if not isinstance(name, str) or not name or "=" in name or "/" in name:
                raise ValueError("hypotheses: bad system name %r" % (name,))
        return dict(hypotheses)
    if isinstance(hypotheses, str):
        raise TypeError("hypotheses: a list of segments or a dict of systems, not a str")
    return {"hyp": hypotheses}


def _plain_args(tmp: str, hypotheses: Hypotheses, translation: Sequence[str],
                sources: Optional[Sequence[str]],
                references: Optional[Sequence[Sequence[str]]]) -> List[str]:
    args: List[str] = []
    path, n = _write_lines(tmp, "ref.0", translation, "translation")
    args += ["--ref", path]

    def same_count(what: str, count: int) -> None:
        # The CLI would say it of its temporary files' names; say it of the
        # caller's arguments (its exit status for bad input: 1).
        if count != n:
            raise AdaptmonError("%s has %d segments but translation has %d" % (what, count, n), 1)

    for i, ref in enumerate(references or ()):
        what = "references[%d]" % i
        path, count = _write_lines(tmp, "ref.%d" % (i + 1), ref, what)
        same_count(what, count)
        args += ["--ref", path]
    for i, (name, segs) in enumerate(_systems(hypotheses).items()):
        what = "hypotheses[%r]" % name
        path, count = _write_lines(tmp, "hyp.%d" % i, segs, what)
        same_count(what, count)
        args += ["--hyp", "%s=%s" % (name, path)]
    if sources is not None:
        path, count = _write_lines(tmp, "src", sources, "sources")
        same_count("sources", count)
        args += ["--src", path]
    return args


def _common_args(target_lang: Optional[str], glossary: Optional[PathLike],
                 profile: Optional[str], options: Mapping[str, Any]) -> List[str]:
    args: List[str] = []
    if target_lang is not None:
        args += ["--target-lang", target_lang]
    if glossary is not None:
        args += ["--glossary", os.fspath(glossary)]
    if profile is not None:
        args += ["--profile", profile]
    return args + _option_args(options)


def _score(hypotheses: Hypotheses, translation: Sequence[str], sources: Optional[Sequence[str]],
           references: Optional[Sequence[Sequence[str]]], extra: List[str]) -> Result:
    tmp = tempfile.mkdtemp(prefix="adaptmon-py-")
    try:
        args = _plain_args(tmp, hypotheses, translation, sources, references)
        out, _ = _run(args + extra + ["--json"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Result.from_json(json.loads(out))


def corpus_score(hypotheses: Hypotheses, translation: Sequence[str],
                 sources: Optional[Sequence[str]] = None, *,
                 target_lang: Optional[str] = None, glossary: Optional[PathLike] = None,
                 profile: Optional[str] = None,
                 references: Optional[Sequence[Sequence[str]]] = None,
                 per_segment: bool = False, **options: Any) -> Result:
    """Scores one session: ``adaptmon score --json`` on these segments.

    hypotheses: a list of segments (system "hyp") or a dict system name ->
    segments. translation: the confirmed translations (the first reference:
    R0/R1 and terms use it). sources: needed for glossary terms.
    references: further references for BLEU, chrF and TER. glossary: a file
    the CLI reads (TICO-19 CSV, CSV/TSV, JSON). Any other keyword is a CLI
    option: ``tokenize="intl"``, ``lowercase=True``, ``k_max=3``, … (README
    of ``adaptmon score --help``). Raises AdaptmonError with the CLI's
    message on bad input, ValueError on a segment containing a line break.
    """
    extra = _common_args(target_lang, glossary, profile, options)
    if per_segment:
        extra.append("--per-segment")
    return _score(hypotheses, translation, sources, references, extra)


def score_files(*args: str) -> Result:
    """``adaptmon score ARGS --json`` as a Result: every format the CLI reads
    (plain files, WMT SGML --sgm-*, XLIFF --xliff, TMX --background, TBX or
    CSV glossaries), e.g. ``score_files("--sgm-ref", ref, "--sgm-hyp", hyp)``."""
    out, _ = _run(list(args) + ["--json"])
    return Result.from_json(json.loads(out))


def _signif(test: str, hypotheses: Mapping[str, Sequence[str]], translation: Sequence[str],
            sources: Optional[Sequence[str]], baseline: Optional[str], n: Optional[int],
            seed: Optional[int], target_lang: Optional[str], glossary: Optional[PathLike],
            profile: Optional[str], options: Mapping[str, Any]) -> Dict[str, Any]:
    if not isinstance(hypotheses, Mapping) or len(hypotheses) < 2:
        raise ValueError("hypotheses: a dict of at least two systems (the baseline and others)")
    extra = _common_args(target_lang, glossary, profile, options) + [test]
    if baseline is not None:
        extra += ["--baseline", baseline]
    if n is not None:
        extra += ["--n-bootstrap", str(n)]
    if seed is not None:
        extra += ["--seed", str(seed)]
    res = _score(hypotheses, translation, sources, None, extra)
    return res.significance or {}


def paired_bootstrap(hypotheses: Mapping[str, Sequence[str]], translation: Sequence[str],
                     sources: Optional[Sequence[str]] = None, *, baseline: Optional[str] = None,
                     n: Optional[int] = None, seed: Optional[int] = None,
                     target_lang: Optional[str] = None, glossary: Optional[PathLike] = None,
                     profile: Optional[str] = None, **options: Any) -> Dict[str, Any]:
    """sacreBLEU 2.6.0's paired bootstrap resampling (``--paired-bs``):
    p-values, means and confidence intervals of every metric against the
    baseline (default: the first system). n resamples (default 1000), seed
    of numpy's default_rng (default 12345, sacreBLEU's). Returns the CLI's
    "significance" JSON object."""
    return _signif("--paired-bs", hypotheses, translation, sources, baseline, n, seed,
                   target_lang, glossary, profile, options)


def paired_randomization(hypotheses: Mapping[str, Sequence[str]], translation: Sequence[str],
                         sources: Optional[Sequence[str]] = None, *,
                         baseline: Optional[str] = None, n: Optional[int] = None,
                         seed: Optional[int] = None, target_lang: Optional[str] = None,
                         glossary: Optional[PathLike] = None, profile: Optional[str] = None,
                         **options: Any) -> Dict[str, Any]:
    """sacreBLEU 2.6.0's paired approximate randomization (``--paired-ar``):
    p-values against the baseline; n trials (default 10000), seed as
    :func:`paired_bootstrap`. Returns the CLI's "significance" object."""
    return _signif("--paired-ar", hypotheses, translation, sources, baseline, n, seed,
                   target_lang, glossary, profile, options)


_SegmentInput = Tuple[Optional[str], str, Tuple[str, ...]]


class Session:
    """A live session in process: segments added one at a time, in order,
    each scored against the history before it (R0/R1 count a word as
    recalled when the confirmed translations before taught it), as the
    service scores a POST of a segment.

    The scorer, the word history (a hash of words in memory) and each
    system's running totals live in the extension: :meth:`add` scores the
    new segment alone, so n adds take time linear in n. It runs the
    command line's own per-segment step (cli/score_embed.c), so after n adds
    the answer is what ``adaptmon score --json --per-segment`` prints for
    those n segments, number for number.

    :meth:`replace` and :meth:`delete` change an earlier segment and score
    what follows again, as the service's PUT and DELETE of a segment do
    (the totals afterwards equal a fresh replay of the segments); they cost
    a replay of the session. Options are the CLI's (``source_lang="en"``,
    ``k_max=2``, ``stopwords="none"``, …); the glossary is read once, when
    the session is made (or, without ``systems``, at the first add).

    Threads may share a session: its changes are serialized (a lock), so
    none is lost; different sessions score in parallel (the GIL is
    released while a segment is scored)."""

    def __init__(self, target_lang: Optional[str] = None, glossary: Optional[PathLike] = None,
                 systems: Optional[Sequence[str]] = None, profile: Optional[str] = None,
                 **options: Any):
        self._args = ["score"] + _common_args(target_lang, glossary, profile, options)
        self._systems: Optional[List[str]] = None
        self._live: Any = None
        self._segs: List[_SegmentInput] = []
        # one change at a time: the extension's object and the lists here
        # move together (threads wait for it with the GIL released)
        self._lock = threading.RLock()
        self.last: Optional[Result] = None
        """The latest answer: ``adaptmon score --json --per-segment`` of the
        session's segments with only the latest segment in ``per_segment``."""
        self.warnings: List[str] = []
        """The CLI's warnings about the options (e.g. no target language)."""
        if systems is not None:
            self._open(list(systems))

    def _open(self, names: List[str]) -> None:
        """Makes the extension's session for these systems (AdaptmonError
        with the CLI's message on bad options or glossary)."""
        for name in names:
            if not isinstance(name, str) or not name:
                raise ValueError("systems: bad system name %r" % (name,))
        status, live, err = _core.live_new(self._args[1:], names)
        if status != 0:
            raise AdaptmonError(_cli_message(err, status), status)
        self._live = live
        self._systems = names
        self.warnings = [ln[len("adaptmon score: "):] if ln.startswith("adaptmon score: ") else ln
                         for ln in err.splitlines() if ln.strip()]

    @property
    def systems(self) -> Optional[List[str]]:
        """The session's system names (None before the first add when not
        given)."""
        return list(self._systems) if self._systems is not None else None

    def __len__(self) -> int:
        return len(self._segs)

    def _input(self, source: Optional[str], translation: str,
               hypotheses: Union[str, Mapping[str, str]]) -> _SegmentInput:
        """One segment's texts in the order of the systems (opening the
        session at the first add); ValueError/TypeError on a mismatch."""
        hyps = {"hyp": hypotheses} if isinstance(hypotheses, str) else dict(hypotheses)
        if self._systems is None:
            self._open(list(hyps))
        names = self._systems or []
        if sorted(hyps) != sorted(names):
            raise ValueError("hypotheses: systems %s, the session has %s" % (sorted(hyps), names))
        for what, text in [("source", source), ("translation", translation)] + \
                [("hypotheses[%r]" % k, v) for k, v in hyps.items()]:
            if not isinstance(text, str) and not (what == "source" and text is None):
                raise TypeError("%s: %s, not str" % (what, type(text).__name__))
        return (source, translation, tuple(hyps[k] for k in names))

    def _score(self, seg: _SegmentInput) -> Result:
        status, out, err = self._live.add(*seg)
        if status != 0:
            raise AdaptmonError(_cli_message(err, status), status)
        return Result.from_json(json.loads(out))

    def _replay(self, segs: List[_SegmentInput], at: int) -> Optional[Result]:
        """Scores segs from scratch; returns the answer of segs[at] (None
        when at is out of range). Raises AdaptmonError on a bad segment."""
        self._live.reset()
        got: Optional[Result] = None
        res: Optional[Result] = None
        for i, seg in enumerate(segs):
            res = self._score(seg)
            if i == at:
                got = res
        self.last = res
        return got

    def _replace_all(self, segs: List[_SegmentInput], at: int) -> Optional[Result]:
        """The session made of segs (answer of segs[at]), or on a bad
        segment the session as it was and the error (AdaptmonError,
        ValueError for a NUL character)."""
        try:
            got = self._replay(segs, at)
        except BaseException:  # a bad text (or an interrupt): back to the old list
            self._replay(self._segs, -1)
            raise
        self._segs = segs
        return got

    @staticmethod
    def _answer(res: Result) -> Dict[str, Any]:
        return {"segment": (res.per_segment or [{}])[-1], "totals": res.systems}

    def add(self, source: Optional[str], translation: str,
            hypotheses: Union[str, Mapping[str, str]]) -> Dict[str, Any]:
        """Adds one segment: its source (None: no glossary terms), the
        confirmed translation and each system's hypothesis (a str: the
        single system "hyp", or a dict name -> text with the session's
        systems). Returns {"segment": that segment's per-segment JSON
        (scores, words, "running" values; "id" its position from 1),
        "totals": system -> :class:`SystemScores` of the session so far}.
        Bad input raises (AdaptmonError with the CLI's message, e.g.
        invalid UTF-8) and leaves the session unchanged."""
        with self._lock:
            seg = self._input(source, translation, hypotheses)
            res = self._score(seg)
            self._segs.append(seg)
            self.last = res
            return self._answer(res)

    def _index(self, index: int) -> int:
        n = len(self._segs)
        if not isinstance(index, int) or not -n <= index < n:
            raise IndexError("segment index %r out of range (%d segments)" % (index, n))
        return index % n

    def replace(self, index: int, source: Optional[str], translation: str,
                hypotheses: Union[str, Mapping[str, str]]) -> Dict[str, Any]:
        """Replaces segment ``index`` (0-based, negative from the end) and
        scores it and every later segment again against the new history
        (the service's PUT of a segment). Returns {"segment": the replaced
        segment's new per-segment JSON, "totals": the session's totals}.
        Bad input raises and leaves the session unchanged."""
        with self._lock:
            i = self._index(index)
            seg = self._input(source, translation, hypotheses)
            got = self._replace_all(self._segs[:i] + [seg] + self._segs[i + 1:], i)
            assert got is not None and self.last is not None
            return {"segment": (got.per_segment or [{}])[-1], "totals": self.last.systems}

    def delete(self, index: int) -> Dict[str, Any]:
        """Deletes segment ``index`` (0-based, negative from the end) and
        scores the later segments again without it (the service's DELETE
        of a segment; ids are positions, so later segments' ids move down
        by one). Returns {"totals": the session's totals} ({} when the
        session is now empty)."""
        with self._lock:
            i = self._index(index)
            self._replace_all(self._segs[:i] + self._segs[i + 1:], -1)
            if not self._segs:
                self.last = None
                return {"totals": {}}
            assert self.last is not None
            return {"totals": self.last.systems}

    def reset(self) -> None:
        """Forgets every segment (the options and glossary stay)."""
        with self._lock:
            if self._live is not None:
                self._live.reset()
            self._segs = []
            self.last = None


# ---- readers: the inputs as the CLI reads them --------------------------------

@dataclass(frozen=True)
class Segment:
    """One segment as ``adaptmon score`` reads it. ``id``: the line number
    (plain text), the ``<seg id>`` (SGML) or the unit's id (XLIFF);
    ``target`` the confirmed translation (the reference); ``hypotheses``
    system name -> text ("" where a system has none); ``doc`` the SGML
    docid, or the XLIFF ``<file>`` index; ``references`` the further
    references (plain text, ``-r`` repeated)."""
    id: str
    source: Optional[str]
    target: Optional[str]
    hypotheses: Dict[str, str] = field(default_factory=dict)
    doc: Union[str, int, None] = None
    references: List[str] = field(default_factory=list)
    terms: List[Dict[str, Any]] = field(default_factory=list)
    """SGML: the reference's ``<term>`` tags (id, source, target — several
    targets joined by '|' —, text, tok_start, tok_count: the tokens of the
    reference it covers), which the standard profile scores as the
    segment's term annotations instead of a glossary's."""


@dataclass(frozen=True)
class Input:
    """What :func:`read_sgml` and :func:`read_xliff` read: the segments in
    the CLI's order, the system names, the languages (the files' declared
    ones for XLIFF, else those given), the sessions as (first, count, doc)
    ranges of segments and, for XLIFF, the units not scored per reason
    (``skipped``: {"total", "reasons"})."""
    segments: List[Segment]
    systems: List[str]
    source_lang: str
    target_lang: str
    sessions: List[Tuple[int, int, Optional[str]]]
    skipped: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class GlossaryEntry:
    """One glossary entry as the CLI reads it: targets split on '|',
    trimmed; ``id`` None when the entry has none."""
    source: str
    targets: List[str]
    case_sensitive: bool = False
    forbidden: bool = False
    id: Optional[str] = None


def _cli_message(err: str, status: int) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    return "\n".join(ln[len("adaptmon score: "):] if ln.startswith("adaptmon score: ") else ln
                     for ln in lines) or "adaptmon score failed (status %d)" % status


def _read(args: List[str]) -> Dict[str, Any]:
    """The CLI's readers on these arguments (cli/score_embed.h): the JSON of
    what was read, or AdaptmonError with the CLI's message."""
    status, out, err = _core.read(args)
    if status != 0:
        raise AdaptmonError(_cli_message(err, status), status)
    return json.loads(out)


def _lang_args(source_lang: Optional[str], target_lang: Optional[str]) -> List[str]:
    args: List[str] = []
    if source_lang is not None:
        args += ["--source-lang", source_lang]
    if target_lang is not None:
        args += ["--target-lang", target_lang]
    return args


def _input(d: Dict[str, Any]) -> Input:
    segs = [Segment(s["id"], s["source"], s["target"], dict(s["hypotheses"]), s["doc"],
                    list(s["references"]), list(s.get("terms", ()))) for s in d["segments"]]
    return Input(segs, list(d["systems"]), d["source_lang"], d["target_lang"],
                 [(x["first"], x["n"], x["doc"]) for x in d["sessions"]], d.get("skipped"))


def read_plain(path: PathLike) -> List[str]:
    """The segments of a plain-text file as ``adaptmon score --ref`` reads
    it: one a line, "\\r\\n" and "\\n" ends, no trailing empty segment.
    Invalid UTF-8 or a NUL byte raise AdaptmonError with the CLI's
    message (file and line)."""
    d = _read(["--ref", os.fspath(path)])
    return [s["target"] for s in d["segments"]]


def read_sgml(ref: PathLike, source: Optional[PathLike] = None,
              hypotheses: Optional[Mapping[str, PathLike]] = None) -> Input:
    """WMT SGML files as ``--sgm-ref``, ``--sgm-src`` and ``--sgm-hyp
    NAME=FILE`` read them: the reference's segments in order, paired by
    segment id (a system without the id scores ""), ``doc`` the docid.
    A reference alone is fine; a hypothesis id missing from the reference
    raises AdaptmonError with the CLI's message."""
    args = ["--sgm-ref", os.fspath(ref)]
    if source is not None:
        args += ["--sgm-src", os.fspath(source)]
    for name, path in (hypotheses or {}).items():
        args += ["--sgm-hyp", "%s=%s" % (name, os.fspath(path))]
    return _input(_read(args))


def read_xliff(path: PathLike, mt: Optional[PathLike] = None, *,
               source_lang: Optional[str] = None, target_lang: Optional[str] = None,
               by_file: bool = False) -> Input:
    """An XLIFF file (1.2 or 2.x, as CAT tools write them) as ``adaptmon
    score --xliff`` reads it: the confirmed units with an MT candidate, in
    order (source, target, each MT system's text), the languages the file
    declares, the skipped units per reason. ``mt``: the pre-translated file
    (``--xliff-mt``) whose targets are the MT. ``by_file``: one session per
    ``<file>`` element. A file without any scoreable unit, or whose
    languages differ from those given, raises AdaptmonError with the
    CLI's message."""
    args = ["--xliff", os.fspath(path)] + _lang_args(source_lang, target_lang)
    if mt is not None:
        args += ["--xliff-mt", os.fspath(mt)]
    if by_file:
        args.append("--by-file")
    return _input(_read(args))


def read_tmx(path: PathLike, target_lang: str, source_lang: Optional[str] = None,
             **options: Any) -> Dict[str, int]:
    """A translation memory (TMX) as ``--background`` reads it: the word
    counts of its ``target_lang`` side, words as recall tokenizes them
    (options such as ``tokenize`` or ``lowercase`` change that, as on the
    CLI). A memory without that language raises AdaptmonError. A plain
    ``count word`` list is read too."""
    args = ["--background", os.fspath(path)] + _lang_args(source_lang, target_lang)
    return dict(_read(args + _option_args(options))["background"])


def read_glossary(path: PathLike, format: Optional[str] = None, *,
                  source_lang: Optional[str] = None,
                  target_lang: Optional[str] = None) -> List[GlossaryEntry]:
    """A glossary as ``--glossary`` reads it: TBX, CSV, TSV or JSON (format
    "auto" by default: detected from the content), a CSV/TSV header naming
    languages mapped to source_lang/target_lang. Errors raise
    AdaptmonError with the CLI's message (file, line)."""
    args = ["--glossary", os.fspath(path)] + _lang_args(source_lang, target_lang)
    if format is not None:
        args += ["--glossary-format", format]
    return [GlossaryEntry(e["source"], list(e["targets"]), bool(e["case_sensitive"]),
                          bool(e["forbidden"]), e["id"]) for e in _read(args)["glossary"]]
