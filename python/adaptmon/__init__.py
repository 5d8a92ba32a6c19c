"""adaptmon in Python: R0/R1 recall, terminology, BLEU, chrF, chrF++ and TER of
adaptive machine translation, with the same numbers as ``adaptmon score --json``.

Every function here runs the command line's own scoring code in process (the
extension ``adaptmon._core`` links it): the arguments are turned into
``adaptmon score`` options, the texts into temporary files, and the JSON the
command prints into Python objects. Nothing is scored in Python, so nothing
can drift from the CLI::

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
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core

__all__ = [
    "AdaptmonError", "Recall", "SystemScores", "Result", "Session",
    "corpus_score", "score_files", "paired_bootstrap", "paired_randomization",
    "__version__",
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
        lines = [ln for ln in err.splitlines() if ln.strip()]
        msg = "\n".join(ln[len("adaptmon score: "):] if ln.startswith("adaptmon score: ") else ln
                        for ln in lines) or "adaptmon score failed (status %d)" % status
        raise AdaptmonError(msg, status)
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
    for i, ref in enumerate(references or ()):
        path, _ = _write_lines(tmp, "ref.%d" % (i + 1), ref, "references[%d]" % i)
        args += ["--ref", path]
    for i, (name, segs) in enumerate(_systems(hypotheses).items()):
        path, _ = _write_lines(tmp, "hyp.%d" % i, segs, "hypotheses[%r]" % name)
        args += ["--hyp", "%s=%s" % (name, path)]
    if sources is not None:
        path, _ = _write_lines(tmp, "src", sources, "sources")
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


class Session:
    """A live session in process: segments added one at a time, in order,
    each scored against the history before it (R0/R1 count a word as
    recalled when the confirmed translations before taught it).

    The history is kept in memory and every :meth:`add` scores the whole
    session again through the CLI, whose per-segment output of the last
    segment is the answer: the numbers are those of ``adaptmon score
    --per-segment`` by construction, at a cost that grows with the history
    (fine for notebooks and dev sets; use the service for long streams)."""

    def __init__(self, target_lang: Optional[str] = None, glossary: Optional[PathLike] = None,
                 systems: Optional[Sequence[str]] = None, profile: Optional[str] = None,
                 **options: Any):
        self._extra = _common_args(target_lang, glossary, profile, options) + ["--per-segment"]
        self._systems: Optional[List[str]] = list(systems) if systems is not None else None
        self._src: List[str] = []
        self._ref: List[str] = []
        self._hyp: Dict[str, List[str]] = {}
        self.last: Optional[Result] = None

    def __len__(self) -> int:
        return len(self._ref)

    def add(self, source: str, translation: str,
            hypotheses: Union[str, Mapping[str, str]]) -> Dict[str, Any]:
        """Adds one segment: its source, the confirmed translation and each
        system's hypothesis (a str: the single system, or a dict name ->
        text with the session's systems). Returns {"segment": that
        segment's per-segment JSON (scores, words), "totals": system ->
        SystemScores of the session so far}. Bad input raises and leaves
        the session unchanged."""
        hyps = {"hyp": hypotheses} if isinstance(hypotheses, str) else dict(hypotheses)
        names = self._systems if self._systems is not None else list(hyps)
        if self._systems is None and self._ref:
            names = list(self._hyp)
        if sorted(hyps) != sorted(names):
            raise ValueError("hypotheses: systems %s, the session has %s" % (sorted(hyps), names))
        trial = {k: self._hyp.get(k, []) + [hyps[k]] for k in names}
        res = _score(trial, self._ref + [translation], self._src + [source], None, self._extra)
        self._src.append(source)
        self._ref.append(translation)
        self._hyp = trial
        self._systems = names
        self.last = res
        seg = (res.per_segment or [{}])[-1]
        return {"segment": seg, "totals": res.systems}
