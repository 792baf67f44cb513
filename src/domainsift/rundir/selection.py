"""A selection: the selected records in the pool's own format (or ``--out-format``), ``selected.ids.tsv``,
``selection.json`` and the selection's signature."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .._internal.atomic import atomic_open, save_json
from .._internal.errors import DomainsiftError
from ..io.corpus import file_suffix
from .layout import IDS, POOL, RUN, SCORES, SCORES_TSV, SELECTED, SELECTED_IDS, SELECTION, SIGNATURE, read_json, resolve
from .manifest import read_pool, records
from .scores import ScoreRun, _derived_files, _remove, _stream_npy


def output_names(files: Sequence[str], target_files: Sequence[str]) -> tuple[str, str | None]:
    """Names of the selected lines' files: ``selected.<suffix>`` of the pool's own format."""
    src = SELECTED + file_suffix(files[0])
    if not target_files:
        return src, None
    tgt = SELECTED + file_suffix(target_files[0])
    if tgt == src:
        src, tgt = SELECTED + ".src" + file_suffix(files[0]), SELECTED + ".tgt" + file_suffix(target_files[0])
    return src, tgt


OUT_FORMATS = ("text", "jsonl", "parquet")


def _pool_format(pool: dict) -> str:
    from ..io.corpus import detect_format
    return (pool.get("reader") or {}).get("format") or detect_format(pool["files"][0])


def _write_converted(out: Path, run: ScoreRun, idx: np.ndarray, out_format: str) -> tuple[int, list[str]]:
    """The selected records in another format than the pool's (``--out-format``): their text (and the
    other side's) with file, line and score; text: one text per line (the other side in a second file)."""
    wanted = {run.id_at(i): float(run.scores[i]) for i in idx}
    got = records(run, wanted, verify=False)  # run_select verified the pool files
    text = {i: t for i, (t, _) in got.items()}
    target = {i: g for i, (_, g) in got.items() if g is not None}
    if out_format == "text":
        broken = next((i for i, t in sorted(text.items()) if "\n" in t or "\r" in t), None)
        if broken is None:
            broken = next((i for i, t in sorted(target.items()) if "\n" in t or "\r" in t), None)
        if broken is not None:
            raise DomainsiftError(f"{broken[0]}:{broken[1]}: the record holds a line break, so --out-format text "
                                  "would split it over two lines; use --out-format jsonl or parquet")
    order = [run.id_at(i) for i in np.sort(np.asarray(idx, dtype=np.int64))]  # pool order, as the in-kind outputs
    from ..io.writers import write_jsonl, write_parquet, write_text
    if out_format == "parquet":
        cols = {"file": [f for f, _ in order], "line": [n for _, n in order], "text": [text[i] for i in order]}
        if target:
            cols["target"] = [target.get(i, "") for i in order]
        cols["score"] = [wanted[i] for i in order]
        write_parquet(out / f"{SELECTED}.parquet", cols)
        return len(order), [str(out / f"{SELECTED}.parquet")]
    if out_format == "jsonl":
        write_jsonl(out / f"{SELECTED}.jsonl", ({"file": i[0], "line": i[1], "text": text[i],
                                               **({"target": target[i]} if i in target else {}), "score": wanted[i]}
                                              for i in order))
        return len(order), [str(out / f"{SELECTED}.jsonl")]
    outputs = [str(out / f"{SELECTED}.txt")]
    write_text(out / f"{SELECTED}.txt", (text[i] for i in order))
    if target:
        write_text(out / f"{SELECTED}.target.txt", (target.get(i, "") for i in order))
        outputs.append(str(out / f"{SELECTED}.target.txt"))
    return len(order), outputs


def dedup_word(d: dict) -> str:
    """``--dedup`` as one word of the signature line: ``exact`` or ``near@0.8``."""
    return d["mode"] if "threshold" not in d else f"{d['mode']}@{d['threshold']:g}"


def exclude_word(d: dict) -> str:
    """``--exclude`` as one word of the signature line: how its lines were compared and their digest."""
    return f"{dedup_word(d)}:{d['lines']}@{d['sha256']}"


def checks_word(d: dict) -> str:
    """The pair checks as one word of the signature line: ``copy+language+ratio@3``."""
    margin = f"/margin{d['min_margin']:g}" if "min_margin" in d else ""
    return f"{'+'.join(d['checks'])}@{d['max_ratio']:g}{margin}"


def write_selection(out_dir: str | os.PathLike, run: ScoreRun, idx: np.ndarray, rule: dict,
                    out_format: str | None = None, kept: dict | None = None, extra: dict | None = None) -> dict:
    """Write the selected records (``idx``, best first) of a score run into ``out_dir``: in the pool's
    own format (text in, text out; JSONL, TSV and CRLF byte for byte; Parquet or a save_to_disk folder
    in, Parquet out with every column and a ``score``), or in ``out_format``."""
    from ..io.columnar import COLUMNAR, write_selected_rows
    from ..io.corpus import write_selected_lines
    from .._internal.signature import signature_string
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    same = out.resolve() == run.dir.resolve()
    _remove(_derived_files(out))
    if not same:  # not a score directory of its own: no scores from an earlier run stay beside it
        _remove([out / SCORES, out / SCORES_TSV, out / RUN])
    chosen = [run.id_at(i) for i in idx]
    selected = set(chosen)
    fmt = _pool_format(run.pool)
    kind = "parquet" if fmt in COLUMNAR else ("jsonl" if fmt == "jsonl" else "text")
    if out_format is not None and out_format not in OUT_FORMATS:
        raise DomainsiftError(f"unknown --out-format '{out_format}' (one of: {', '.join(OUT_FORMATS)})")
    if out_format not in (None, kind):
        n, outputs = _write_converted(out, run, idx, out_format)
    elif fmt in COLUMNAR:
        n = write_selected_rows(out / f"{SELECTED}.parquet", run.pool["files"], fmt,
                                {c: float(run.scores[i]) for c, i in zip(chosen, idx)})
        outputs = [str(out / f"{SELECTED}.parquet")]
    else:
        src_name, tgt_name = output_names(run.pool["files"], run.pool["target_files"])
        # the selected lines' bytes, when the run kept them (a cascade's candidates): no read of the pool
        have = kept if kept is not None and all(kept.get(i, (None,))[0] is not None for i in selected) else None
        n = write_selected_lines(out / src_name, run.pool["files"], selected,
                                 kept={i: kept[i][0] for i in selected} if have else None)
        outputs = [str(out / src_name)]
        if tgt_name:  # the other side: the same line numbers in the aligned files
            tmap = dict(zip(run.pool["files"], run.pool["target_files"]))
            write_selected_lines(out / tgt_name, run.pool["target_files"], {(tmap[f], ln) for f, ln in selected},
                                 kept={(tmap[f], ln): kept[(f, ln)][1] for f, ln in selected} if have else None)
            outputs.append(str(out / tgt_name))
    with atomic_open(out / SELECTED_IDS) as fh:
        fh.write("file\tline\tscore\trank\n")
        for rank, (i, (f, ln)) in enumerate(zip(idx, chosen), 1):
            fh.write(f"{f}\t{ln}\t{float(run.scores[i])!r}\t{rank}\n")
    if not same:  # a selection elsewhere carries its pool, so evaluate and downstream read it alone
        _stream_npy(out / IDS, [run.id_array], run.id_array.shape, np.int64)
        save_json(out / POOL, run.pool)
    selection = {"n_selected": int(n), "n_pool": int(len(run.scores)), "rule": rule, "outputs": outputs,
                 "score_dir": resolve(run.dir),
                 "min_selected_score": float(run.scores[idx].min()) if len(idx) else None, **(extra or {})}
    save_json(out / SELECTION, selection)
    sig = dict(run.signature)
    sig["selection"] = {**rule, **({"out_format": out_format} if out_format else {}),
                        **({"dedup": {k: v for k, v in extra["dedup"].items() if k != "duplicates_removed"}}
                           if extra and "dedup" in extra else {}),
                        **({"exclude": {k: v for k, v in extra["exclude"].items() if k != "lines_excluded"}}
                           if extra and "exclude" in extra else {}),
                        **({"pair_checks": {k: v for k, v in extra["pair_checks"].items()
                                            if k in ("checks", "max_ratio", "min_margin", "languages")}}
                           if extra and "pair_checks" in extra else {})}
    words = {**({"select_dedup": dedup_word(sig["selection"]["dedup"])} if "dedup" in sig["selection"] else {}),
             **({"select_exclude": exclude_word(sig["selection"]["exclude"])} if "exclude" in sig["selection"]
                else {}),
             **({"select_pair_checks": checks_word(sig["selection"]["pair_checks"])}
                if "pair_checks" in sig["selection"] else {})}
    sig["signature"] = signature_string({**run.signature, **{f"select_{k}": v for k, v in rule.items()}, **words})
    save_json(out / SIGNATURE, sig)
    return selection


def recorded_excludes(run_dirs) -> list:
    """``(run directory, the exclude record of its selection.json, or None)`` for each of ``run_dirs``: the
    test sets their selections left out (:func:`domainsift.dedup.recorded_exclusion` reads them again)."""
    out = []
    for d in run_dirs:
        try:
            sel = read_json(d, SELECTION) if Path(d).is_dir() else None
        except DomainsiftError:
            sel = None
        out.append((d, sel.get("exclude") if isinstance(sel, dict) else None))
    return out


def read_selected_ids(run_dir: str | os.PathLike) -> list[tuple[str, int]]:
    p = Path(run_dir) / SELECTED_IDS
    if not p.exists():
        raise DomainsiftError(f"{run_dir}: no selection (selected.ids.tsv); run 'domainsift select' first")
    rows = []
    with open(p, encoding="utf-8") as fh:
        next(fh, None)
        for n, line in enumerate(fh, 2):
            f, _, rest = line.rstrip("\n").partition("\t")
            ln = rest.split("\t", 1)[0]
            if not f or not ln.isdigit():
                raise DomainsiftError(f"{p}, line {n}: not a 'file<TAB>line' row")
            rows.append((f, int(ln)))
    return rows


def check_selection(run_dir: str | os.PathLike, sel: dict) -> None:
    """``selection.json`` and ``selected.ids.tsv`` agree: a count of selected records, and as many rows."""
    d = Path(run_dir)
    n = sel.get("n_selected") if isinstance(sel, dict) else None
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise DomainsiftError(f"{d / SELECTION}: 'n_selected' is not a count; not a selection domainsift wrote")
    if (d / SELECTED_IDS).is_file():
        rows = len(read_selected_ids(d))
        if rows != n:
            raise DomainsiftError(f"{d / SELECTED_IDS}: {rows} rows, but {SELECTION} says {n} records were "
                                  "selected; run the selection again")


def selection_records(run_dir: str | os.PathLike) -> list[tuple[str, str | None]]:
    """The selected records of a selection directory, ``(text, other side or None)`` in pool order,
    read from the pool files after verifying that they are the ones scored."""
    ids = read_selected_ids(run_dir)
    pool = read_pool(run_dir)
    got = records(pool, ids, where=run_dir)
    index = {f: k for k, f in enumerate(pool["files"])}
    return [got[i] for i in sorted(set(ids), key=lambda i: (index.get(i[0], -1), i[1])) if i in got]


def tsv_field(text: str) -> str:
    """A text as one field of a TSV row: backslash, tab, line feed and carriage return written as ``\\\\``,
    ``\\t``, ``\\n`` and ``\\r`` (the escapes of PostgreSQL's and MySQL's text format), so that a row is
    one line whatever the text holds (:func:`read_mix` reads them back)."""
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


_UNESCAPE = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def tsv_unfield(field: str) -> str:
    """The text a :func:`tsv_field` holds."""
    import re
    return re.sub(r"\\(.)", lambda m: _UNESCAPE.get(m.group(1), m.group(0)), field)


def write_mix(out_dir: str | os.PathLike, chosen: list[tuple[str, str, int, float]], texts: dict, meta: dict,
              sides: dict | None = None) -> None:
    """A selection of several targets: ``selected.mix.tsv`` (``domain``, ``file``, ``line``, ``score``,
    ``text``, and for a bitext pool ``other_side``: every selected line once, each with the one target it
    went to; a text's backslashes, tabs, line feeds and carriage returns escaped as ``\\\\ \\t \\n \\r``,
    so a row is one line: :func:`read_mix`) and ``mix.json`` (``meta``), written last: it marks the run
    finished. ``sides``: the other side of each line, by ``(file, line)``, for a bitext pool."""
    from .layout import MIX, MIX_TSV
    out = Path(out_dir)
    pair = sides is not None and any(sides.get((f, ln)) is not None for _, f, ln, _ in chosen)
    with atomic_open(out / MIX_TSV) as fh:
        fh.write("domain\tfile\tline\tscore\ttext" + ("\tother_side" if pair else "") + "\n")
        for name, f, ln, score in chosen:
            other = f"\t{tsv_field(sides.get((f, ln)) or '')}" if pair else ""
            fh.write(f"{name}\t{f}\t{ln}\t{score!r}\t{tsv_field(texts[(f, ln)])}{other}\n")
    save_json(out / MIX, meta)


def read_mix(run_dir: str | os.PathLike) -> list[dict]:
    """The rows of a mixture's ``selected.mix.tsv``, each ``{domain, file, line, score, text[, other_side]}``
    with the texts as they were selected."""
    from .layout import MIX_TSV
    p = Path(run_dir) / MIX_TSV
    if not p.is_file():
        raise DomainsiftError(f"{run_dir}: no {MIX_TSV}; not a mixture's folder")
    with open(p, encoding="utf-8", newline="\n") as fh:
        head = fh.readline().rstrip("\n").split("\t")
        rows = []
        for n, line in enumerate(fh, 2):
            cells = line.rstrip("\n").split("\t")
            if len(cells) != len(head) or not cells[2].isdigit():
                raise DomainsiftError(f"{p}, line {n}: not a row of {len(head)} fields ({', '.join(head)})")
            row = dict(zip(head, cells))
            row["line"], row["score"] = int(row["line"]), float(row["score"])
            for k in ("text", "other_side"):
                if k in row:
                    row[k] = tsv_unfield(row[k])
            rows.append(row)
    return rows
