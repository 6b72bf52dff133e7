"""JSON lines: one object a line, with lines that are not (a log's) skipped."""

import json


def objects(lines):
    """The JSON objects among `lines` (an iterable of str or bytes), in order. A line that is
    not one JSON object is skipped."""
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value
