"""Helpers for the browser tests (tests/test_browser.py) and bench/render_bench.py: a real
``jupyter lab`` server in a temporary root, Chromium through Python Playwright, notebooks whose
outputs hold saved report bundles."""
