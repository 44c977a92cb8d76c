"""Colours and labels shared by every view (static HTML and PNG pictures).

One colour and one label per bottleneck, the same as the JupyterLab renderer's
(``js/src/colors.ts``; both sides' tests check them against ``tests/data/display_cases.json``). A module of its own so that the views import it, not each other.
"""

from __future__ import annotations

COLOURS = {
    "compute": "#4c78c8",
    "memory": "#e8833a",
    "communication": "#17a2b8",
    "other": "#9467bd",
    "idle": "#d65f5f",
    "overhead": "#d65f5f",
    "cpu": "#3fa36b",
}
LABELS = {
    "compute": "Compute",
    "memory": "Memory",
    "communication": "Communication (exposed)",
    "other": "Other",
    "idle": "Idle (overhead)",
    "overhead": "Overhead",
    "cpu": "CPU",
}

# Muted text (notes, labels of key figures) in the static HTML.
MUTED = "color:#666"
