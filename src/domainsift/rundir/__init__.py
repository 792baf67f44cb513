"""The run directory: the one module that writes and reads it.

A *score directory* (``domainsift score``, ``combine``):

- ``scores.npy``      float64 scores (n,), in pool order;
- ``ids.npy``         int64 (n, 2): every record's id, as its file's position in ``pool.json``'s
                      ``files`` and its 1-based line (or row);
- ``scores.tsv``      ``file<TAB>line<TAB>score`` for every pool record;
- ``pool.json``       the pool: resolved file paths (and the other side's for a parallel pool),
                      how they were read, the number of records, and each file's size and SHA-256;
- ``signature.json``  what determines the scores (method, parameters, model, seed, inputs, version);
- ``run.json``        what varies from run to run (timings).

A *selection* (``domainsift select``) adds ``selected.<ext>`` (the pool's own format; both sides
of a parallel pool), ``selected.ids.tsv`` and ``selection.json``; ``evaluate`` adds ``eval.json``.

Every file is written under a temporary name and renamed. Writing new scores first removes
``signature.json`` (which marks a finished score directory) and every output derived from
earlier scores, and writes ``signature.json`` last, so a run that dies midway never leaves
new scores beside an old signature or an old selection beside new scores.
The package, one module per part: :mod:`.layout` (names, kinds, the lock), :mod:`.manifest` (the pool's
fingerprints and verified records), :mod:`.scores`, :mod:`.selection`, :mod:`.artifacts` (embeddings,
clusterings, evaluations). Everything is re-exported here: callers write ``rundir.write_scores``.
"""

from .layout import *  # noqa: F401,F403
from .layout import _Claim, check_recordable, claim, has, kind, path, read_json, resolve, write_json  # noqa: F401
from .manifest import (file_fingerprint, pool_manifest, pool_source, read_pool, records,  # noqa: F401
                       source_manifest, verify_inputs, verify_stats)
from .scores import ScoreRun, _stream_npy, check_arrays, load_scores, read_ids, read_share, read_signature, write_scores  # noqa: F401
from .selection import OUT_FORMATS, output_names, check_selection, dedup_word, exclude_word, read_mix, read_selected_ids, recorded_excludes, selection_records, tsv_field, write_mix, write_selection  # noqa: F401
from .steps import Step, identity, model_identity  # noqa: F401
from .artifacts import read_clusters, write_clustering, write_embedding, write_eval  # noqa: F401
