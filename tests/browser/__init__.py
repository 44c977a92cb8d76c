"""Helpers for the browser tests (tests/test_browser*.py) and bench/render_bench.py: a real
``jupyter lab`` server in a temporary root, Chromium through Python Playwright, notebooks whose
outputs hold saved report bundles (lab.py); what a standalone page carries and the report
tables as rows (pages.py, used by the view tests too)."""
