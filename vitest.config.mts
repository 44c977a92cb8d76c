// Unit tests of the TypeScript model, formatting and schema reading
// (js/src/__tests__), against the same example files as the Python tests
// (tests/data). Run: jlpm test (.ci/run runs it before pytest, and type-checks
// and lints them: jlpm lint:check; pytest does not run them).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['js/src/__tests__/**/*.spec.ts'],
    environment: 'node'
  }
});
