"""``domainsift report``: one self-contained HTML page over a set of run directories.

It renders whatever the directories hold: a clustering (purity table, confusion
matrix, an interactive sentence map with hover text, a colour switch between gold
domain and cluster, 2-sigma ellipses of the clusters, the outliers table); a
selection (score histogram with the cut, the rule in words, the top and the borderline
sentences, precision/recall when the run was evaluated; a map of the pool coloured by selected / not
selected); downstream perplexities; the
cross-domain matrix with its centroid-similarity heatmap and correlation; and every
run's signature. The JavaScript is Bokeh's own bundle, embedded from the installed
``bokeh`` package (no CDN): the file opens with no network. Maps of large corpora
show a seeded sample (the page says so), so the file stays small.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .._internal.atomic import atomic_open
from .._version import __version__
from .._internal.errors import DomainsiftError

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
           "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"]
N_EXAMPLES = 10


def _bokeh():
    from .._internal.optional import require
    require("bokeh", "report")
    import bokeh.embed
    import bokeh.models
    import bokeh.plotting
    import bokeh.resources
    return bokeh


def _esc(x) -> str:
    return html.escape(str(x))


def _table(header: Sequence[str], rows: Sequence[Sequence], cls: str = "") -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


# ---------------------------------------------------------------- sections

def _map_section(bk, m: dict, name: str):
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, CustomJS, HoverTool, Select
    n = len(m["x"])
    gold = m.get("gold") or ["?"] * n
    clusters = [str(c) for c in m["cluster"]]
    groups = {"gold": sorted(set(gold)), "cluster": sorted(set(clusters), key=lambda c: int(c))}
    colours = {k: [PALETTE[v.index(g) % len(PALETTE)] for g in (gold if k == "gold" else clusters)]
               for k, v in groups.items()}
    major = {str(c): d for c, d in (m.get("cluster_majority") or {}).items()}
    if m.get("gold") and set(clusters) <= set(major):  # a cluster in its majority domain's colour: one palette
        colours["cluster"] = [PALETTE[groups["gold"].index(major[c]) % len(PALETTE)] if major[c] in groups["gold"]
                              else "#888888" for c in clusters]
    source = ColumnDataSource({"x": m["x"], "y": m["y"], "text": m["text"], "gold": gold, "cluster": clusters,
                               "colour_gold": colours["gold"], "colour_cluster": colours["cluster"],
                               "colour": list(colours["gold"] if m.get("gold") else colours["cluster"])},
                              name=f"map-source-{name}")
    fig = bk.plotting.figure(width=760, height=520, tools="pan,wheel_zoom,box_zoom,reset",
                             title="sentence map (PCA to 2-D)", name=f"map-{name}")
    points = fig.scatter("x", "y", source=source, size=5, fill_color="colour", line_color=None, alpha=0.65,
                         name=f"map-points-{name}")
    fig.add_tools(HoverTool(renderers=[points], tooltips=[("text", "@text"), ("gold", "@gold"),
                                                          ("cluster", "@cluster")]))
    xs, ys = np.asarray(m["x"]), np.asarray(m["y"])
    from ..cluster import points_ellipse
    gmm = {str(e["cluster"]): e for e in m.get("ellipses") or []}
    for c in groups["cluster"]:
        mask = np.array(clusters) == c
        e = gmm.get(c) or points_ellipse(np.stack([xs[mask], ys[mask]], 1))
        if e:  # in one neutral colour, labelled: the points' colours (gold or cluster) never clash with it
            fig.ellipse(x=e["x"], y=e["y"], width=e["width"], height=e["height"], angle=e["angle"], fill_alpha=0,
                        line_color="#444444", line_dash="dashed", line_width=1.5)
            fig.text(x=[e["x"]], y=[e["y"]], text=[f"cluster {c}" + (f" ({major[c]})" if c in major else "")],
                     text_font_size="9px", text_color="#222222",
                     text_align="center", text_baseline="middle")
    select = Select(title="colour by", value="gold" if m.get("gold") else "cluster",
                    options=["gold", "cluster"], name=f"colour-{name}")
    select.js_on_change("value", CustomJS(args={"source": source}, code="""
        const d = source.data;
        d['colour'] = d['colour_' + this.value].slice();
        source.change.emit();
    """))
    note = (f"{m['n_shown']} of {m['n_total']} sentences" +
            (f", a seeded sample (seed {m['seed']})" if m["n_shown"] < m["n_total"] else "") +
            "; hover a point for its text; dashed ellipses: each cluster's 2-sigma ellipse in this projection"
            + (" (the GMM's own: each component's mean and covariance projected through the map's PCA)"
               if m.get("ellipses") else " (of the points)") + ", labelled with its cluster" + (" and its majority domain; 'colour by cluster' paints each cluster in "
                                           "its majority domain's colour" if major else "") + ".")
    return column(select, fig), note


def _alignment_plots(bk, al: dict, name: str) -> list:
    """Both languages' bitext vectors before and after alignment (paper 003, Figure 3)."""
    figs = []
    for view in ("before", "after"):
        if view not in al:
            continue
        fig = bk.plotting.figure(width=380, height=340, title=f"bitext {view} alignment (PCA)", tools="pan,wheel_zoom,reset",
                                 name=f"align-{view}-{name}")
        for side, colour, label in (("a", "#1f77b4", "in-domain language"), ("b", "#d62728", "pool language")):
            pts = np.asarray(al[view][side])
            fig.scatter(pts[:, 0], pts[:, 1], size=4, alpha=0.6, color=colour, legend_label=label)
        fig.legend.label_text_font_size = "8pt"
        figs.append(fig)
    return figs


def _weights_plot(bk, rec: dict, name: str):
    """A sampler's domain weights over training (paper 004, Figure 2): one step line per domain."""
    from bokeh.palettes import Category10, Category20
    n = len(rec["domains"])
    colours = (Category10[10] if n <= 10 else Category20[20]) * (1 + n // 20)
    from .plots import weight_steps
    fig = bk.plotting.figure(width=760, height=300, title="sampling weight per domain over training batches",
                             tools="pan,wheel_zoom,reset,hover", tooltips=[("domain", "$name"), ("weight", "$y{0.000}")],
                             name=f"weights-{name}")
    xs, series = weight_steps(rec)
    for d, (dom, ys) in enumerate(zip(rec["domains"], series)):
        fig.step(xs, ys, mode="after", line_width=2, color=colours[d], legend_label=str(dom), name=str(dom))
    fig.legend.label_text_font_size = "8pt"
    fig.legend.click_policy = "hide"
    fig.xaxis.axis_label = "training batch"
    return fig


def _histogram(bk, scores: np.ndarray, cut: float | None, name: str):
    from bokeh.models import Span
    finite = scores[np.isfinite(scores)]
    hist, edges = np.histogram(finite, bins=60)
    fig = bk.plotting.figure(width=760, height=260, title="scores over the pool (the line: the selection's cut)",
                             tools="", toolbar_location=None, name=f"hist-{name}")
    fig.quad(top=hist, bottom=0, left=edges[:-1], right=edges[1:], fill_color="#1f77b4", line_color=None)
    if cut is not None:
        fig.add_layout(Span(location=cut, dimension="height", line_color="#d62728", line_width=2))
    return fig


def _heatmap(bk, matrix, rows: Sequence[str], cols: Sequence[str], title: str, name: str, fmt: str = "{:.2f}"):
    from bokeh.models import ColumnDataSource, LinearColorMapper
    m = np.asarray(matrix, dtype=float)
    xs, ys, vs = [], [], []
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            xs.append(str(c))
            ys.append(str(r))
            vs.append(float(m[i, j]))
    src = ColumnDataSource({"x": xs, "y": ys, "v": vs, "label": [fmt.format(v) for v in vs]})
    fig = bk.plotting.figure(width=120 + 60 * len(cols), height=100 + 36 * len(rows), title=title,
                             x_range=[str(c) for c in cols], y_range=list(reversed([str(r) for r in rows])),
                             tools="hover", tooltips=[("", "@y × @x: @label")], toolbar_location=None,
                             name=f"heatmap-{name}")
    mapper = LinearColorMapper(palette="Blues256", low=float(m.max()), high=float(m.min()))
    fig.rect("x", "y", 1, 1, source=src, fill_color={"field": "v", "transform": mapper}, line_color="white")
    fig.text("x", "y", text="label", source=src, text_align="center", text_baseline="middle", text_font_size="9px")
    fig.xaxis.major_label_orientation = 0.8
    return fig


def rule_in_words(rule: dict, probabilistic: bool = False) -> str:
    """A selection rule as a sentence: ``{'top': 24}`` -> "the 24 best-scoring records"."""
    if rule.get("top") is not None:
        return f"the {rule['top']:,} best-scoring records"
    if rule.get("fraction") is not None:
        return f"the best-scoring {100 * float(rule['fraction']):g}% of the pool"
    if rule.get("threshold") is not None:
        return f"every record scoring at least {float(rule['threshold']):g}"
    if rule.get("positive"):
        return "every record the classifier calls in-domain (probability above 0.5)"
    if rule.get("sample") is not None:
        return (f"{rule['sample']:,} records drawn in proportion to exp(score / {rule.get('temperature', 1):g}) "
                f"(seed {rule.get('sample_seed', 0)})")
    return "no rule recorded"


MAP_SAMPLE = 2000


def _selection_map(bk, run, selected: np.ndarray, name: str):
    """A 2-D map of a seeded sample of the pool (TF-IDF of the texts, reduced by SVD: no encoder is
    needed to draw it), each point coloured by whether the selection took it."""
    from bokeh.models import ColumnDataSource, HoverTool
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    n = len(run.scores)
    pick = np.arange(n) if n <= MAP_SAMPLE else np.sort(np.random.default_rng(0).choice(n, MAP_SAMPLE, replace=False))
    ids = [run.id_at(i) for i in pick]
    from .. import rundir
    got = rundir.records(run, ids, verify=False)  # the section verified the pool files
    keep = [k for k, i in enumerate(ids) if i in got]
    if len(keep) < 3:
        return None, ""
    texts = [got[ids[k]][0] for k in keep]
    try:
        x = TfidfVectorizer(min_df=1, sublinear_tf=True).fit_transform(texts)
        xy = TruncatedSVD(n_components=2, random_state=0).fit_transform(x) if x.shape[1] > 2 else np.zeros((len(texts), 2))
    except ValueError:  # no word at all (punctuation only)
        return None, ""
    chosen = np.isin(pick[keep], selected)
    fig = bk.plotting.figure(width=760, height=460, tools="pan,wheel_zoom,box_zoom,reset",
                             title="pool map: selected and not selected (TF-IDF + SVD to 2-D)", name=f"selmap-{name}")
    renderers = []
    for flag, colour, label in ((False, "#bbbbbb", "not selected"), (True, "#d62728", "selected")):
        rows = np.flatnonzero(chosen == flag)
        src = ColumnDataSource({"x": xy[rows, 0], "y": xy[rows, 1], "text": [texts[r][:300] for r in rows],
                                "score": [float(run.scores[pick[keep[r]]]) for r in rows]})
        renderers.append(fig.scatter("x", "y", source=src, size=5, color=colour, alpha=0.7, legend_label=label))
    fig.add_tools(HoverTool(renderers=renderers, tooltips=[("text", "@text"), ("score", "@score{0.0000}")]))
    fig.legend.label_text_font_size = "8pt"
    note = (f"{len(keep)} of {n} pool records" + (", a seeded sample (seed 0)" if len(keep) < n else "") +
            f"; {int(chosen.sum())} of them selected; hover a point for its text and score.")
    return fig, note


def _selection_section(bk, d: Path, name: str) -> tuple[list, str]:
    from .. import rundir
    run = rundir.load_scores(d)
    rundir.verify_inputs(run)  # the texts shown at each rank are the texts that were scored
    sel = rundir.read_json(d, rundir.SELECTION)
    if sel is not None:
        rundir.check_selection(d, sel)
    cut = sel.get("min_selected_score") if sel else None
    parts = [_histogram(bk, run.scores, cut, name)]
    order = np.lexsort((np.arange(len(run.scores)), -run.scores))
    k = int(sel["n_selected"]) if sel else 0
    picks = {"top": order[:N_EXAMPLES]}
    if sel and 0 < k < len(order):
        picks["just above the cut"] = order[max(0, k - N_EXAMPLES // 2):k]
        picks["just below the cut"] = order[k:k + N_EXAMPLES // 2]
    got = rundir.records(run, {run.id_at(i) for v in picks.values() for i in v}, verify=False)
    warned = (rundir.read_json(d, rundir.RUN) or {}).get("warnings", [])  # what the run said before its fit
    body = "".join(f"<p class='warning'>warning: {_esc(w)}</p>" for w in warned)
    if sel:
        body += (f"<p>{sel['n_selected']:,} of {sel['n_pool']:,} records selected: "
                 f"{_esc(rule_in_words(sel.get('rule') or {}))}.</p>")
        fig, note = _selection_map(bk, run, order[:k], name)
        if fig is not None:
            parts.append(fig)
            body = f"<p class='note'>{_esc(note)}</p>" + body
    pc = (sel or {}).get("pair_checks")
    if pc:
        langs = f" (sides in {' and '.join(pc['languages'])})" if pc.get("languages") else ""
        body += (f"<h4>Pair checks{_esc(langs)}: pairs that are not translations, passed over</h4>"
                 + (f"<p class='warning'>language not checked: {_esc(pc['language_unchecked'])}</p>"
                    if pc.get("language_unchecked") else "")
                 + _table(["check", "pairs removed", "examples (scored side | other side)"],
                          [[c, pc["removed"].get(c, 0),
                            " // ".join(f"{a} | {b}" for a, b in pc.get("examples", {}).get(c, [])) or "–"]
                           for c in pc["checks"]], "examples"))
    ev = rundir.read_json(d, rundir.EVAL)
    if ev:
        body += _table(["precision", "recall", "F1", "selected", "gold", "correct"],
                       [[f"{ev['precision']:.4f}", f"{ev['recall']:.4f}", f"{ev['f1']:.4f}", ev["n_selected"],
                         ev["n_gold"], ev["n_correct"]]])
    for label, idx in picks.items():
        rows = [[int(np.where(order == i)[0][0]) + 1, f"{run.scores[i]:.4g}", got.get(run.id_at(i), ("?",))[0]]
                for i in idx]
        body += f"<h4>{_esc(label)}</h4>" + _table(["rank", "score", "text"], rows, "examples")
    return parts, body


# ---------------------------------------------------------------- the page

def _check_sampling(rec, path: Path) -> None:
    """A sampling record as the sampler writes it: domains, their sizes, and a history of batches with one
    finite weight per domain; anything else is one line naming the file."""
    import math

    def bad(what: str):
        return DomainsiftError(f"{path}: {what}; not a sampling record that domainsift wrote")

    if not isinstance(rec, dict):
        raise bad("not a JSON object")
    domains, sizes, hist = rec.get("domains"), rec.get("sizes"), rec.get("history")
    if not isinstance(domains, list) or not domains:
        raise bad("'domains' is not a list of names")
    if not isinstance(sizes, list) or len(sizes) != len(domains):
        raise bad(f"'sizes' is not a list of {len(domains)} numbers")
    if not isinstance(hist, list) or not hist:
        raise bad("'history' is not a list of weight updates")
    for k, h in enumerate(hist):
        w = h.get("weights") if isinstance(h, dict) else None
        if (not isinstance(h, dict) or not isinstance(h.get("batch"), int) or not isinstance(w, list)
                or len(w) != len(domains)
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in w)):
            raise bad(f"history entry {k} is not a batch number with {len(domains)} finite weights")
    if not isinstance(rec.get("signature", {}), dict):
        raise bad("'signature' is not a JSON object")


def _section(bk, d: Path, name: str) -> tuple[Path, list, list]:
    """One run directory's part of the page: what it holds, and its blocks of HTML and plots."""
    from .. import rundir
    blocks, found = [], []
    c = rundir.read_json(d, rundir.CLUSTERING)
    if c is not None:
        found.append("clustering")
        blocks += _clustering_blocks(bk, d, name, c)
    if rundir.has(d, rundir.SCORES):
        found.append("selection")
        figs, body = _selection_section(bk, d, name)
        blocks += [("plot", f) for f in figs] + [("html", body)]
    al = rundir.read_json(d, rundir.ALIGNMENT)
    if al is not None:
        from bokeh.layouts import row
        blocks.append(("html", f"<h3>Cross-lingual alignment</h3><p class='note'>"
                               f"{al['n_pairs_shown']} bitext pairs, a seeded sample.</p>"))
        blocks.append(("plot", row(*_alignment_plots(bk, al, name))))
    ds = rundir.read_json(d, rundir.DOWNSTREAM)
    if ds is not None:
        found.append("downstream")
        blocks.append(("html", _downstream_html(ds)))
    cd = rundir.read_json(d, rundir.CROSSDOMAIN)
    if cd is not None:
        found.append("cross-domain")
        blocks += _crossdomain_blocks(bk, cd, name)
    rec = rundir.read_json(d, rundir.SAMPLING)
    if rec is not None:
        _check_sampling(rec, rundir.path(d, rundir.SAMPLING))
        found.append("sampling")
        blocks.append(("html", f"<h3>Domain sampling: {_esc(rec['signature'].get('method', ''))}</h3>"
                               f"<p class='note'>{len(rec['history']) - 1} updates of the weights; "
                               f"domains (examples): " + _esc(", ".join(f"{n} ({k})" for n, k in
                                                                      zip(rec["domains"], rec["sizes"]))) + "</p>"))
        blocks.append(("plot", _weights_plot(bk, rec, name)))
    sig = rundir.read_json(d, rundir.SIGNATURE)
    for other in (c, ds, rec):
        if sig is None and other is not None:
            sig = other.get("signature")
    if not found and sig is None:
        raise DomainsiftError(f"{d}: holds no domainsift results (clustering, scores, downstream, crossdomain, sampling)")
    if sig:
        blocks.append(("html", "<details><summary>signature</summary><pre>" + _esc(sig.get("signature", "")) +
                       "\n\n" + _esc(json.dumps(sig, indent=1, ensure_ascii=False)[:20000]) + "</pre></details>"))
    return d, found, blocks


def _clustering_blocks(bk, d: Path, name: str, c: dict) -> list:
    """A clustering's purity table, its confusion heat map, the sentence map and the outliers."""
    from .. import rundir
    blocks = []
    if c.get("summary"):
        blocks.append(("html", "<h3>Purity</h3>" + _table(
            ["k", "PCA", "purity (mean)", "sd", "seeds"],
            [[r["k"], r["pca"] or "none", f"{r['purity_mean']:.3f}", f"{r['purity_std']:.3f}", r["n_seeds"]]
             for r in c["summary"]])))
    if c.get("confusions"):
        conf = c["confusions"][0]
        blocks.append(("plot", _heatmap(bk, conf["matrix"], conf["domains"], [str(x) for x in conf["clusters"]],
                                        f"confusion: k={conf['k']}, PCA={conf['pca'] or 'none'}, seed {conf['seed']}",
                                        name, fmt="{:.0f}")))
    m = rundir.read_json(d, rundir.MAP)
    if m is not None:
        layout, note = _map_section(bk, m, name)
        blocks.append(("plot", layout))
        blocks.append(("html", f"<p class='note'>{_esc(note)}</p>"))
    if c.get("outliers", {}).get("examples"):
        o = c["outliers"]
        s = o.get("summary")
        stats = (f"<p>Mean length {s['mean_words_outliers']} words against {s['mean_words_rest']} for the rest; "
                 f"holding a digit: {s['share_with_digits_outliers']:.0%} of the outliers against "
                 f"{s['share_with_digits_rest']:.0%} of the rest.</p>"
                 if s and s.get("mean_words_rest") is not None and s.get("mean_words_outliers") is not None else "")
        blocks.append(("html", f"<h3>Outliers: {o['count']} sentences in another domain's cluster</h3>" + stats + _table(
            ["gold", "cluster's domain", "words", "text"],
            [[e["gold"], e["cluster_domain"], e["length"], e["text"]] for e in o["examples"][:50]],
            "examples")))
    return blocks


def _downstream_html(ds: dict) -> str:
    """The downstream judge's table: the translation model's BLEU with its paired intervals, or the LM's
    perplexity."""
    if ds.get("judge") == "nmt":
        base = ds.get("baseline")
        note = (f"<p class='note'>Against {_esc(base)}: the BLEU difference, its 95% interval and p by paired "
                f"bootstrap ({ds.get('bootstrap', {}).get('n_samples', 1000)} samples); a difference whose "
                "interval holds 0 is not decided.</p>") if base else ""
        return (f"<h3>Downstream: BLEU of the translation model trained on each "
                f"({_esc(ds['direction'])}), on {_esc(Path(ds['test'][1]).name)}</h3>" + note
                + _table(["training data", "BLEU", "chrF", "chrF++", "xent/char", "pairs", "best epoch",
                          f"BLEU vs {base or 'baseline'}"],
                         [[r["name"], f"{r['bleu']:.2f}", f"{r['chrf']:.2f}", _num(r.get("chrfpp"), 2),
                           _num(r.get("xent_per_char"), 4), r["n_pairs"],
                           f"{r['best_epoch']}/{r['epochs_run']}", _versus(r.get("vs_baseline"))]
                          for r in ds["rows"]]))
    return (f"<h3>Downstream: {ds['order']}-gram LM perplexity on "
            f"{_esc(Path(ds['test']).name)}</h3>"
            + _table(["training data", "perplexity", "OOV rate", "sentences"],
                     [[r["name"], f"{r['perplexity']:.1f}", f"{r['oov_rate']:.3f}", r["n_sentences"]]
                      for r in ds["rows"]]))


def _crossdomain_blocks(bk, cd: dict, name: str) -> list:
    """The cross-domain perplexity matrix, and the centroid similarity with its correlation."""
    blocks = [("plot", _heatmap(bk, cd["perplexity"], cd["domains"], cd["domains"],
                                "perplexity: LM of (row) on test of (column)", name + "p", "{:.0f}"))]
    if cd.get("centroid_similarity"):
        blocks.append(("plot", _heatmap(bk, cd["centroid_similarity"], cd["domains"], cd["domains"],
                                        "centroid cosine similarity", name + "s")))
        blocks.append(("html", f"<p>Pearson r (similarity vs log perplexity, off-diagonal): "
                               f"{cd['pearson_similarity_vs_log_perplexity']:.3f}</p>"))
    return blocks


def build_report(run_dirs: Sequence[str | os.PathLike], out: str | os.PathLike, title: str = "domainsift report") -> dict:
    """Write one self-contained HTML file over ``run_dirs``; returns what it holds."""
    from .. import rundir
    bk = _bokeh()
    dirs = [Path(d) for d in run_dirs]
    for d in dirs:
        if not d.is_dir():
            raise DomainsiftError(f"{d}: not a directory")
    sections, kinds = [], []
    for i, d in enumerate(dirs):
        try:
            sections.append(_section(bk, d, f"r{i}"))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            # a JSON artifact of the right syntax but not the shape a domainsift run writes
            raise DomainsiftError(f"{d}: holds a file that no domainsift run wrote in this form "
                                  f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'malformed'})"
                                  ) from None
        kinds.append(sections[-1][1])
    # one bokeh document for every plot, so that the page loads its scripts once
    all_plots = [b for _, _, blocks in sections for kind, b in blocks if kind == "plot"]
    script, divs = bk.embed.components(all_plots) if all_plots else ("", [])
    divs = iter(divs)
    body = []
    for d, found, blocks in sections:
        body.append(f"<section><h2>{_esc(d.name or d)} <small>{_esc(', '.join(found) or 'run')}</small></h2>")
        for kind, b in blocks:
            body.append(next(divs) if kind == "plot" else b)
        body.append("</section>")
    # only the bundles the page uses (core and widgets: the colour switch), not mathjax, tables or gl
    js = bk.resources.Resources(mode="inline", components=["bokeh", "bokeh-widgets"]).render_js()
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}
h2 small {{ color: #888; font-weight: normal; font-size: 60%; }}
table {{ border-collapse: collapse; margin: .6em 0; font-size: 90%; }}
td, th {{ border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }}
table.examples td:last-child {{ max-width: 760px; }}
.note {{ color: #666; font-size: 90%; }} section {{ border-top: 2px solid #eee; margin-top: 2em; }}
.warning {{ background: #fff4e0; border-left: 4px solid #e69500; padding: .4em .8em; }}
pre {{ white-space: pre-wrap; font-size: 80%; }}
</style>
{js}
{script}
</head><body>
<h1>{_esc(title)}</h1>
<p class="note">domainsift {__version__}; {len(dirs)} run director{'y' if len(dirs) == 1 else 'ies'}. Self-contained: opens with no network.</p>
{''.join(body)}
</body></html>
"""
    with atomic_open(out) as fh:
        fh.write(page)
    return {"path": str(out), "runs": [str(d) for d in dirs], "kinds": kinds, "bytes": len(page.encode("utf-8"))}


def _num(v, digits: int) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _versus(vs: dict | None) -> str:
    """A row's paired test against the baseline, in words: the difference, its interval, p, the verdict."""
    from ..nmt.significance import in_words
    return in_words(vs)
