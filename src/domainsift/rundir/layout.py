"""The run directory's layout: every file name (no other module spells one), where an artifact lives,
what kind of run a directory holds, and the lock a run takes on it."""

from __future__ import annotations

import json
import os
from pathlib import Path


from .._internal.atomic import save_json
from .._internal.errors import DomainsiftError


# ------------------------------------------------------------------------------ names
# Every file name of a run directory; no other module spells one (tests/test_layout.py).
SCORES, IDS, SCORES_TSV, POOL = "scores.npy", "ids.npy", "scores.tsv", "pool.json"
SIGNATURE, RUN = "signature.json", "run.json"
SELECTION, SELECTED_IDS, SELECTED = "selection.json", "selected.ids.tsv", "selected"
EVAL = "eval.json"
ALIGNMENT, ALIGNMENT_PNG = "alignment.json", "alignment.png"
EMBEDDINGS, EMBED_IDS = "embeddings.npy", "ids.tsv"
CLUSTERING, CLUSTERS, OUTLIERS, MAP = "clustering.json", "clusters.tsv", "outliers.tsv", "map.json"
DOWNSTREAM, CROSSDOMAIN, CROSSDOMAIN_PNG = "downstream.json", "crossdomain.json", "crossdomain.png"
SAMPLING, REPORT = "sampling.json", "report.html"
SHARE = "share.json"  # the pool's estimated in-domain share (domainsift.share), when a run estimated it
MIX, MIX_TSV, MIX_TARGETS = "mix.json", "selected.mix.tsv", "targets"  # several targets in one run
STUDENT = "student"  # a student's saved fit (the student method and --cascade): reusable with --student-from
LOCK, RESUME = ".lock", ".resume"
CHECKSUMS = "checksums"  # run.json's table of the SHA-256 of scores.npy and ids.npy, written with them
# the translation floor: a model folder (``nmt train``, and each model adapt and the judge train), an adapt
# folder, a judge row
NMT_MODEL, NMT_VOCAB, NMT_RECORD, CT2_PREFIX, CT2_SOURCE = "model", "spm.model", "nmt.json", "ct2-", "domainsift.json"
NMT_VOCAB_DIR = "vocab"  # a sealed folder of the vocabulary under .resume (checked before a resumed training)
ADAPT_SELECT, ADAPT_REVERSE, ADAPT_BASE, ADAPT_MODEL = "select", "reverse", "base", "model"
PSEUDO_SRC, PSEUDO_TGT, PSEUDO_HOW, ADAPT = "pseudo.src", "pseudo.tgt", "pseudo.json", "adapt.json"
QUERY_TGT, QUERY_HOW = "query.tgt", "query.json"
JUDGE_MODELS, JUDGE_ROW, JUDGE_HYP, JUDGE_INIT = "models", "judge.json", "test.hyp", "init"
# a score run's resume state (``DIR/.resume/<identity>/``, gone when the run ends): the fit, its last
# finished epoch, the cascade's student, its shards, its plan, the candidates and the merged scores; a
# shard's scores, ids and marker; a mixture's shared fit and its epochs (``DIR/.resume/``)
STATE_MODEL, STATE_CHECKPOINT, STATE_STUDENT_MODEL = "model", "fit-checkpoint", "student-model"
STATE_STUDENT, STATE_FINAL, STATE_PLAN = "student", "final", "plan.json"
SHARD_GLOB = "shard-*.done"


def shard_files(state, shard: int) -> tuple[Path, Path, Path]:
    """A shard's scores, ids and completion marker in a resume state folder."""
    stem = Path(state) / f"shard-{shard:06d}"
    return Path(f"{stem}.scores.npy"), Path(f"{stem}.ids.npy"), Path(f"{stem}.done")


def shard_number(marker: Path) -> int:
    """The shard a completion marker is of (a ValueError for a file that is not one)."""
    return int(Path(marker).name[6:12])


def state_candidates(m: int) -> str:
    return f"candidates-{m}.npy"  # the student's top m pool positions, kept for a resumed run


def state_teacher(m: int) -> str:
    return f"teacher-{m}"  # the teacher's shards over m candidates


def shared_fit(identity: str) -> str:
    return f"fit-{identity}"  # a mixture's fit of every target


def shared_checkpoint(identity: str) -> str:
    return f"checkpoint-{identity}"  # its last finished epoch


def resumable(folder: Path) -> bool:
    """Whether a resume state folder holds something a rerun resumes from (a saved fit that took training:
    a model, a classifier; a checkpoint, a scored shard). A cosine mixture's centroids are no such thing:
    they are made again in a moment."""
    return Path(folder).is_dir() and any(p.name in (STATE_MODEL, STATE_STUDENT_MODEL, STATE_CHECKPOINT,
                                                    "classifier.json")
                                         or p.name.endswith(".done") or p.name.startswith("checkpoint-")
                                         for p in Path(folder).rglob("*"))

SCORE_FILES = (SCORES, IDS, POOL, SIGNATURE)
# outputs computed from a directory's scores: stale once the scores are rewritten
DERIVED = (SELECTED_IDS, SELECTION, EVAL)
# every name a score or selection run writes or replaces in its directory
OUTPUTS = SCORE_FILES + (SCORES_TSV, RUN, STUDENT, SHARE) + DERIVED + (SELECTED + ".*",)
EMBED_OUTPUTS = (EMBEDDINGS, SIGNATURE, EMBED_IDS)
CLUSTER_OUTPUTS = (CLUSTERING, OUTLIERS, CLUSTERS, MAP, "*.png")

# the files each kind of run writes: what a run that replaces it (--overwrite) removes first
NMT_OUTPUTS = (NMT_MODEL, NMT_VOCAB, NMT_RECORD, CT2_PREFIX + "*", JUDGE_ROW, JUDGE_HYP)
ADAPT_OUTPUTS = (ADAPT_SELECT, ADAPT_REVERSE, ADAPT_BASE, ADAPT_MODEL, PSEUDO_SRC, PSEUDO_TGT, PSEUDO_HOW,
                 QUERY_TGT, QUERY_HOW, ADAPT, JUDGE_HYP)
OWNED = {"score": OUTPUTS + (ALIGNMENT, ALIGNMENT_PNG), "selection": DERIVED + (SELECTED + ".*", IDS, POOL, SIGNATURE),
         "embed": EMBED_OUTPUTS, "cluster": CLUSTER_OUTPUTS, "mix": (MIX, MIX_TSV),
         "nmt": NMT_OUTPUTS, "adapt": ADAPT_OUTPUTS}
# kinds whose folders are refused when they hold anything a domainsift run did not start (their names are
# common words: a user's own pseudo.tgt or model/ is never taken for a killed run's)
STRICT = ("nmt", "adapt")
# kinds made of steps that each keep or make themselves again by their identity: a rerun removes nothing
STEPWISE = ("adapt",)

# what a directory holds, told by the file that only that kind of run writes
KINDS = {"score": SCORES, "selection": SELECTED_IDS, "embed": EMBEDDINGS, "cluster": CLUSTERING, "mix": MIX,
         "nmt": NMT_RECORD, "adapt": ADAPT}


def path(run_dir: str | os.PathLike, name: str) -> Path:
    """Where artifact ``name`` (one of this module's names) lives in ``run_dir``."""
    return Path(run_dir) / name


def has(run_dir: str | os.PathLike, name: str) -> bool:
    return (Path(run_dir) / name).is_file()


def read_json(run_dir: str | os.PathLike, name: str) -> dict | None:
    """A JSON artifact of ``run_dir``, or None when it is not there; unreadable is a one-line error."""
    p = Path(run_dir) / name
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DomainsiftError(f"{p}: unreadable ({exc}); run the command that wrote it again") from None


def write_json(run_dir: str | os.PathLike, name: str, obj) -> Path:
    """Write a JSON artifact atomically; returns its path."""
    p = Path(run_dir) / name
    p.parent.mkdir(parents=True, exist_ok=True)
    save_json(p, obj)
    return p


def kind(run_dir: str | os.PathLike) -> str | None:
    """What finished run ``run_dir`` holds: ``score`` (scores, maybe with a selection in place),
    ``selection`` (a selection from a score directory elsewhere), ``embed``, ``cluster``; None
    when it holds no domainsift run."""
    d = Path(run_dir)
    for k, marker in KINDS.items():
        if (d / marker).is_file():
            return k
    return None


class _Claim:
    """A run's hold on its output directory: an exclusive lock on ``DIR/.lock`` for as long as the
    run writes (a second run into the same directory fails at once), released on exit."""

    def __init__(self, out: Path, fh, created: bool):
        self.out, self.fh, self.created = out, fh, created
        self.earlier: dict = {}  # an earlier run's entries of the kind this run writes (removed if not rewritten)
        self.writes: str | None = None

    def _rewrote_marker(self) -> bool:
        """Whether this run wrote the file that marks a finished run of its kind anew (a claim that ends
        without writing one, a lock held by a test or a tool, removes nothing)."""
        marker = KINDS[self.writes]
        try:
            st = (self.out / marker).lstat()
        except FileNotFoundError:
            return False
        return (st.st_ino, st.st_mtime_ns) != self.earlier.get(marker)

    def release(self) -> None:
        if self.fh is not None:
            import fcntl
            fcntl.flock(self.fh, fcntl.LOCK_UN)
            self.fh.close()
            self.fh = None

    def __enter__(self):
        return self

    def __exit__(self, kind, *exc):
        if kind is None and self.earlier and self._rewrote_marker():  # the run finished and wrote its
            import shutil  # own run: what the earlier run wrote and this one did not write again is stale
            for name, seen in self.earlier.items():
                p = self.out / name
                try:
                    st = p.lstat()
                except FileNotFoundError:
                    continue
                if (st.st_ino, st.st_mtime_ns) == seen:
                    shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
        self.release()
        if kind is not None and self.created:  # a run that failed in a directory it made leaves nothing
            try:
                (self.out / LOCK).unlink(missing_ok=True)
                self.out.rmdir()
            except OSError:  # it wrote something (a resumable state): keep it, and the lock file that says
                (self.out / LOCK).touch()  # a domainsift run wrote the folder


def _ours(name: str) -> bool:
    """Whether a file or folder of a run directory is one a domainsift run writes (or its lock, resume
    state or a temporary file)."""
    import fnmatch
    names = OUTPUTS + EMBED_OUTPUTS + CLUSTER_OUTPUTS + (ALIGNMENT, ALIGNMENT_PNG, DOWNSTREAM, CROSSDOMAIN,
                                                         CROSSDOMAIN_PNG, SAMPLING, REPORT, LOCK, RESUME,
                                                         MIX, MIX_TSV, MIX_TARGETS) + NMT_OUTPUTS + ADAPT_OUTPUTS
    return name.startswith(".") or any(fnmatch.fnmatch(name, n) for n in names)


def _remove_owned(out: Path, held: str) -> None:
    """Remove every file and folder a ``held`` run writes from ``out``."""
    import fnmatch
    import shutil
    for p in out.iterdir():
        if any(fnmatch.fnmatch(p.name, n) for n in OWNED[held]):
            shutil.rmtree(p) if p.is_dir() else p.unlink()


def _owned_entries(out: Path, held: str) -> dict:
    """The files and folders of ``out`` that a ``held`` run writes, each with its inode and modification
    time: an entry written again (a new file renamed into place) no longer matches."""
    import fnmatch
    found = {}
    for p in out.iterdir():
        if any(fnmatch.fnmatch(p.name, n) for n in OWNED[held]):
            st = p.lstat()
            found[p.name] = (st.st_ino, st.st_mtime_ns)
    return found


def claim(out_dir: str | os.PathLike, writes: str, overwrite: bool = False, source: str | os.PathLike | None = None,
          identity: str | None = None):
    """Take ``out_dir`` for a run that writes a ``writes`` run (a kind of :data:`KINDS`); use as a
    context manager.

    Refused with one line, unless ``overwrite``: a directory that holds a finished run of another kind
    (a score run's scores, an embedding); a finished score run of other inputs or parameters (its
    ``run.json`` identity differs from ``identity``: the same command again is allowed, which is how a
    rerun repeats and a killed run resumes); a folder of files that no domainsift run writes. Always
    refused: a directory another domainsift process is writing to. A selection may go into the score
    directory it reads (``source``) or replace another selection."""
    import fcntl
    out = Path(out_dir)
    if out.is_symlink() and not out.exists():
        raise DomainsiftError(f"{out}: a symbolic link that leads nowhere (a loop, or its target is gone); "
                              "choose another --out")
    if out.exists() and not out.is_dir():
        raise DomainsiftError(f"{out}: exists and is not a directory; choose another --out")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    lock_created = not (out / LOCK).exists()
    fh = open(out / LOCK, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise DomainsiftError(f"{out}: another domainsift run is writing to this directory; wait for it to "
                              "finish or choose another --out") from None
    held_claim = _Claim(out, fh, created)
    try:
        held = kind(out)
        same_source = source is not None and out.resolve() == Path(source).resolve()
        if held and held != writes and not overwrite and not (writes == "selection" and same_source):
            raise DomainsiftError(f"{out}: holds a finished {held} run; a {writes} run would replace it. "
                                  f"Choose another --out (or pass --overwrite to replace it)")
        if held and held != writes and overwrite and not (writes == "selection" and same_source):  # replaced
            _remove_owned(out, held)
        if held == writes and writes not in STEPWISE:  # a run of the same kind: what it does not write again
            # is removed when it ends
            held_claim.earlier, held_claim.writes = _owned_entries(out, held), writes
        if held == writes == "score" and identity is not None and not overwrite and has(out, SIGNATURE):
            before = (read_json(out, RUN) or {}).get("identity")
            if before != identity:
                method = (read_json(out, SIGNATURE) or {}).get("method", "another")
                raise DomainsiftError(f"{out}: holds a finished {method} score run of other inputs, parameters "
                                      "or version; this run would replace it. Choose another --out (or pass "
                                      "--overwrite to replace it)")
        if writes in STRICT and not held and not created and not overwrite and lock_created:
            entries = sorted(p.name for p in out.iterdir() if p.name != LOCK)
            if entries:  # never written by a domainsift run (each leaves its lock): a user's folder
                raise DomainsiftError(f"{out}: a folder of other files ({', '.join(entries[:3])}"
                                      f"{', ...' if len(entries) > 3 else ''}), not a domainsift run; choose "
                                      "another --out (or pass --overwrite to write into it)")
        if not held and not created and not overwrite:
            foreign = sorted(p.name for p in out.iterdir() if not _ours(p.name))
            if foreign:
                raise DomainsiftError(f"{out}: a folder of other files ({', '.join(foreign[:3])}"
                                      f"{', ...' if len(foreign) > 3 else ''}), not a domainsift run; choose "
                                      "another --out (or pass --overwrite to write into it)")
    except BaseException as exc:
        held_claim.__exit__(type(exc), exc, None)
        if lock_created:  # refused: the folder is left as it was found
            (out / LOCK).unlink(missing_ok=True)
        raise
    return held_claim


def resolve(path: str | os.PathLike) -> str:
    """A local path made absolute (links resolved); a URL as it is."""
    from ..io.urls import is_url
    return str(path) if is_url(path) else os.path.realpath(str(path))


def check_recordable(paths) -> None:
    """Every path can be written into the run's JSON and TSV files: valid UTF-8, no tab or line break
    (checked before any work, so a run never fails after scoring on a file's name)."""
    for f in paths:
        f = str(f)
        try:
            f.encode("utf-8")
        except UnicodeEncodeError:
            shown = f.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            raise DomainsiftError(f"{shown!r}: the file name is not valid UTF-8, so it cannot be recorded in "
                                  f"{POOL} and {SELECTED_IDS}; rename the file") from None
        if "\t" in f or "\n" in f or "\r" in f:
            raise DomainsiftError(f"{f!r}: a file name with a tab or line break cannot be recorded in "
                                  f"{SCORES_TSV} and {SELECTED_IDS}; rename the file")
