"""Exceptions. The CLI prints a :class:`DomainsiftError` as one line and exits 2."""


class DomainsiftError(Exception):
    """Any error that the user can fix (bad input, bad option, missing extra)."""


class InputError(DomainsiftError):
    """Bad input data; the message names the file and, where it applies, the line."""


class LanguageMismatch(DomainsiftError):
    """The in-domain set and the pool side a method compares it with are in two languages, and the method
    has no space both share (:func:`domainsift.languages.check_same_language`)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a resumable job; the message says what was kept for the same command to resume."""


def missing_extra(package: str, extra: str) -> DomainsiftError:
    return DomainsiftError(
        f"this needs the optional package '{package}': pip install 'domainsift[{extra}]'"
    )


class DiskFullError(DomainsiftError):
    """The disk (or the quota) filled while a file was written (:mod:`domainsift._internal.atomic`)."""
