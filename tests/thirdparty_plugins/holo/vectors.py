"""Tiny content signature used to spot near-duplicates."""

import hashlib


def signature(text):
    words = sorted(set((text or "").lower().split()))
    return hashlib.sha1(" ".join(words).encode()).hexdigest()[:12]
