"""Is the text in a language the encoder knows? A warning before a long run, not a refusal.

The in-domain set's language and a seeded sample of the pool's are identified with py3langid (langid.py's
model, inside its wheel; extra ``langid``): each line is classified and the set takes its majority
language. Chosen over pycld2 and lingua for the same set-level accuracy (42 of 42 sets of 100 lines) at
lingua's sentence accuracy (0.967) and 14 times its speed (bench/results/langid.md). A language outside
the encoder's (:attr:`domainsift.embed.Abilities.languages`) gets one warning line naming the encoder's
languages; an encoder whose languages are unknown (a model of your own) is not checked. Without
py3langid installed, nothing is checked.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Sequence

log = logging.getLogger(__name__)

SAMPLE = 200  # lines of a set that are identified (a seeded pool sample, the in-domain set's first lines)
NAMES = {"ar": "Arabic", "zh": "Chinese", "nl": "Dutch", "en": "English", "fr": "French", "de": "German",
         "it": "Italian", "ja": "Japanese", "ko": "Korean", "pl": "Polish", "pt": "Portuguese", "es": "Spanish",
         "th": "Thai", "tr": "Turkish", "ru": "Russian", "cs": "Czech", "sk": "Slovak", "hu": "Hungarian",
         "fi": "Finnish", "sv": "Swedish", "da": "Danish", "no": "Norwegian", "ro": "Romanian", "el": "Greek",
         "bg": "Bulgarian", "uk": "Ukrainian", "hr": "Croatian", "sl": "Slovenian", "et": "Estonian",
         "lv": "Latvian", "lt": "Lithuanian", "he": "Hebrew", "hi": "Hindi", "vi": "Vietnamese",
         "id": "Indonesian"}


def name(code: str) -> str:
    return NAMES.get(code, code)


def identify(texts: Sequence[str], limit: int = SAMPLE) -> tuple[str, float, int] | None:
    """The majority language of ``texts`` (its first ``limit`` non-empty lines): ISO 639-1 code, the share
    of lines in it, and how many lines were looked at; None without py3langid or without text."""
    try:
        import py3langid
    except ImportError:
        return None
    lines = [t for t in texts if t and t.strip()][:limit]
    if not lines:
        return None
    votes = Counter(py3langid.classify(t)[0] for t in lines)
    code, n = votes.most_common(1)[0]
    return code, n / len(lines), len(lines)


def check_coverage(model: str, sets: dict[str, Sequence[str]], shared_space_needed: bool = False,
                   say: bool = True, said: set | None = None) -> list[str]:
    """Warnings (one line each, also logged) for every set (``{"the in-domain set": texts, ...}``) whose
    language the encoder ``model`` does not cover."""
    from .embed import abilities
    langs = abilities(model).languages
    if not langs:
        return []
    out = []
    for what, texts in sets.items():
        found = identify(texts)
        if found is None:
            continue
        code, share, n = found
        if code in langs:
            continue
        covered = ", ".join(sorted(name(c) for c in langs))
        msg = (f"{what} looks {name(code)} ({share:.0%} of {n} lines), which the encoder '{model}' was not trained "
               f"on (it covers: {covered}); expect a worse selection. Languages and their cost: docs/languages.md")
        if say and (said is None or msg not in said):  # a mixture's targets share the pool: said once
            log.warning(msg)
        if said is not None:
            said.add(msg)
        out.append(msg)
    return out


SURE = 0.8  # a set's language is taken as known when this share of its lines (and at least MIN_LINES) agree
MIN_LINES = 20


def check_same_language(selector, in_domain: Sequence[str], pool: Sequence[str],
                        other_side: Sequence[str] | None = None, what: str = "the in-domain set") -> list[str]:
    """The in-domain set and the pool side a method scores in two different languages: a method that
    compares them as they are (every method but crosslingual, :attr:`crosses_languages`) then ranks the
    pool by language, not domain (a trial: Finnish software strings against a Romanian pool, precision
    0.494). Refused in one line when the method has no space both languages share (n-gram LMs, tf-idf,
    a monolingual encoder), naming the way out: the pool side in the set's language (``--pool`` and
    ``--pool-target`` swapped, for a bitext whose other side is) or ``--method crosslingual``; with an
    encoder trained on both languages, a warning. Only sets whose language is sure (:data:`SURE` of at
    least :data:`MIN_LINES` lines) are compared; without py3langid nothing is."""
    from ._internal.errors import LanguageMismatch
    if selector.crosses_languages or not selector.reads_content:
        return []
    mine, theirs = identify(in_domain), identify(pool)
    if not _sure(mine) or not _sure(theirs) or mine[0] == theirs[0]:
        return []
    other = identify(other_side) if other_side is not None else None
    if _sure(other) and other[0] == mine[0]:
        fix = (f"the pool's other side (--pool-target) is {name(mine[0])}: give it as --pool and this side as "
               "--pool-target" + (", or run this target in a mixture of its own" if what != "the in-domain set"
                                  else ""))
    else:
        fix = "use --method crosslingual (the in-domain set in one language, the pool in another)"
    msg = (f"{what} looks {name(mine[0])} ({mine[1]:.0%} of {mine[2]} lines) and the pool side it would be "
           f"compared with {name(theirs[0])} ({theirs[1]:.0%} of {theirs[2]} lines): {selector.name} would rank "
           f"the pool by language, not by domain; {fix}")
    from .embed import abilities
    encoder = selector.encoder_name
    ab = abilities(encoder) if encoder is not None else None
    if ab is not None and ab.shared_space and ab.languages and {mine[0], theirs[0]} <= ab.languages:
        # an encoder that puts both languages in one space: the run goes on, warned
        log.warning(msg)
        return [msg]
    raise LanguageMismatch(msg)


def _sure(found) -> bool:
    return found is not None and found[1] >= SURE and found[2] >= MIN_LINES
