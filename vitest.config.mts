// Unit tests of the TypeScript model, formatting and schema reading
// (js/src/__tests__), against the same example files as the Python tests
// (tests/data). Run: jlpm test (CI: .ci/run; pytest runs them too, in
// tests/test_js_units.py).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['js/src/__tests__/**/*.spec.ts'],
    environment: 'node'
  }
});
