"""Percentiles as the reports give them (nearest rank, no interpolation)."""


def percentile(samples, fraction):
    """The sample at `fraction` (0.99 for p99) of the sorted samples; None for none."""
    ordered = sorted(samples)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def median(samples):
    ordered = sorted(samples)
    if not ordered:
        return None
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
