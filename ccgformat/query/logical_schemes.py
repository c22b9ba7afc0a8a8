"""The logical clocks of `logical_query.logical` (paper 003): Ravel's steps
(`logical_ravel`) and Lamport's (`logical_lamport`), named apart so that the commands
that offer them as choices import none of the logical query."""

__all__ = ["SCHEMES"]

SCHEMES = ("ravel", "lamport")
