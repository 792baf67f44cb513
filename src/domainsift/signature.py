"""A result's signature: what ran, as a dict and as one ``key:value|...`` string (public: a benchmark row
signs itself as a run does)."""

from ._internal.signature import make_signature, signature_string

__all__ = ["make_signature", "signature_string"]
