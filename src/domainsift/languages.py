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


def check_coverage(model: str, sets: dict[str, Sequence[str]], shared_space_needed: bool = False) -> list[str]:
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
        log.warning(msg)
        out.append(msg)
    return out
