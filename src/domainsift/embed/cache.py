"""A disk cache of sentence vectors, in chunks.

Texts are cut into chunks of ``chunk_size`` in input order; a chunk's file is
named by a hash of the embedder's ``cache_key`` (model, layer, pooling, max
length) and the chunk's texts. A second run on the same corpus encodes
nothing; a run killed midway finds its finished chunks and encodes only the
rest. Each chunk is written to a temporary name and renamed.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

from .._internal.atomic import save_npy
from .._internal.checksums import hash_texts

log = logging.getLogger(__name__)


def default_cache_dir() -> str:
    return os.environ.get("DOMAINSIFT_CACHE") or str(Path.home() / ".cache" / "domainsift")


#: the cache writes no chunk that would leave its disk with less free than this, or than RESERVE_SHARE of it:
#: a line's vector is 1.5 KB (384 float32), so a pool of 10M lines would cache 15 GB, a billion 1.5 TB
RESERVE_BYTES = 2 << 30
RESERVE_SHARE = 0.05


def room_for(folder: Path, nbytes: int) -> bool:
    """Whether ``nbytes`` more in ``folder`` leave its disk its reserve (:data:`RESERVE_BYTES`, or
    :data:`RESERVE_SHARE` of the disk if more)."""
    import shutil
    usage = shutil.disk_usage(folder)
    return usage.free - nbytes >= max(RESERVE_BYTES, RESERVE_SHARE * usage.total)


class CachedEmbedder:
    """Wrap an embedder that has a ``cache_key`` with an on-disk chunk cache.

    Attributes after :meth:`encode`: ``last_hits_`` and ``last_misses_`` (chunks).
    """

    def __init__(self, embedder, cache_dir: str | os.PathLike, chunk_size: int = 1024,
                 progress: bool = True):
        if not hasattr(embedder, "cache_key"):
            raise TypeError(f"{type(embedder).__name__} has no cache_key and cannot be cached")
        self.embedder = embedder
        self.cache_dir = Path(cache_dir)
        self.chunk_size = chunk_size
        self.progress = progress
        self.last_hits_ = self.last_misses_ = 0
        self.full_ = False  # the cache's disk reached its reserve: vectors are computed, no longer kept

    @property
    def name(self) -> str:
        return self.embedder.name

    @property
    def cache_key(self) -> str:
        return self.embedder.cache_key

    def _model_dir(self) -> Path:
        h = hashlib.sha256(self.cache_key.encode()).hexdigest()[:16]
        return self.cache_dir / h

    def _chunk_path(self, texts: list[str]) -> Path:
        h = hashlib.sha256()
        h.update(self.cache_key.encode())
        hash_texts(h, texts)  # no two different chunks hash alike
        return self._model_dir() / f"{h.hexdigest()[:32]}.npy"

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return ``(len(texts), dim)`` float32 vectors, reading cached chunks."""
        mdir = self._model_dir()
        mdir.mkdir(parents=True, exist_ok=True)
        keyfile = mdir / "KEY"
        if not keyfile.exists():
            keyfile.write_text(self.cache_key + "\n")
        parts = []
        self.last_hits_ = self.last_misses_ = 0
        from tqdm.auto import tqdm
        starts = range(0, len(texts), self.chunk_size)
        for start in tqdm(starts, desc="chunks", unit="chunk", disable=not self.progress or len(starts) < 2,
                          leave=False):
            chunk = texts[start:start + self.chunk_size]
            path = self._chunk_path(chunk)
            if path.exists():
                arr = _read_checked(path, len(chunk))
                if arr is not None:
                    parts.append(arr)
                    self.last_hits_ += 1
                    continue
            arr = np.asarray(self.embedder.encode(chunk), dtype=np.float32)
            self._keep(path, arr)
            parts.append(arr)
            self.last_misses_ += 1
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.concatenate(parts, axis=0)

    def _keep(self, path: Path, arr: np.ndarray) -> None:
        """Write a chunk and its digest, unless the cache's disk would go below its reserve or is full:
        the cache is an optimisation, and a long run must not stop (or fill a disk) for it."""
        from .._internal.errors import DiskFullError
        if self.full_:
            return
        try:
            if room_for(self.cache_dir, arr.nbytes + 4096):
                save_npy(path, arr)
                _write_digest(path)  # written last: a chunk without its digest is never used
                return
            reason = (f"one more chunk would leave its disk less than it keeps free ({RESERVE_BYTES / 2**30:.0f} "
                      f"GiB, or {100 * RESERVE_SHARE:.0f}% of the disk)")
        except DiskFullError:  # the atomic writers' own word for ENOSPC and short writes
            reason = "its disk is full"
        self.full_ = True
        log.warning("the vector cache in %s stops growing: %s; vectors are still computed, not kept. Give "
                    "--cache a larger disk, or --cache '' for none", self.cache_dir, reason)


def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _write_digest(path: Path) -> None:
    from .._internal.atomic import atomic_open
    from .._internal.checksums import file_sha256
    with atomic_open(_digest_path(path)) as fh:
        fh.write(file_sha256(path) + "\n")


def _read_checked(path: Path, n: int) -> np.ndarray | None:
    """A cached chunk whose bytes match the digest written beside it, with ``n`` rows of finite values;
    None (with a warning, so the chunk is encoded again) for anything else: a damaged or edited chunk, a
    chunk without a digest (a cache of 0.10.1 or earlier), a short or unreadable file."""
    import io
    try:
        data = path.read_bytes()
        want = _digest_path(path).read_text(encoding="utf-8").strip()
        if hashlib.sha256(data).hexdigest() != want:
            raise ValueError("its bytes do not match its digest")
        arr = np.load(io.BytesIO(data), allow_pickle=False)
        if arr.ndim != 2 or arr.shape[0] != n or not np.isfinite(arr).all():
            raise ValueError(f"shape {arr.shape} or values that are not finite, for {n} texts")
        return arr
    except FileNotFoundError:
        log.info("cache chunk %s has no digest (an earlier version's cache); encoding it again", path)
    except (OSError, ValueError) as exc:
        log.warning("cache chunk %s is damaged (%s); encoding it again", path, exc)
    return None
