"""The package version. It changes whenever a default changes, so that a signature names the
behaviour that made a result (tests/test_reproducibility.py holds the defaults' fingerprint per version)."""

__version__ = "0.42.0"
