/** The example files under tests/data that both test suites read. */

import { readFileSync } from 'fs';
import { join } from 'path';

/** tests/data, from the repository root (where vitest runs). */
export const DATA = join(__dirname, '..', '..', '..', 'tests', 'data');

/** A JSON file under tests/data. */
export function readJson(...parts: string[]): any {
  return JSON.parse(readFileSync(join(DATA, ...parts), 'utf8'));
}
