"""Redaction corpora: ordinary text that must survive redaction unchanged (``benign``)."""
