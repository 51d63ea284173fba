"""Text helpers for the ledger plugin."""
