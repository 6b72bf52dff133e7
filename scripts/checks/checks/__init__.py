"""The checkers' shared part: one step/report format (report.py), percentiles (stats.py),
JSON-line parsing (jsonl.py), the control socket (control.py) and each cluster's steps, written
once for every controller (clusters.py). Standard library only: the reference controller's venv and Home
Assistant's both import it. A checker puts scripts/checks on sys.path:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checks"))
"""
