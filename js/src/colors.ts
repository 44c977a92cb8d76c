/**
 * One colour per bottleneck, the same in every view and both themes, and
 * the same as the Python views' (jupyter_brrr/views/style.py): the tests of
 * both sides check them against tests/data/display_cases.json.
 */

/** Colours of the span split and of op/kernel bounds. */
export const COLORS: { [key: string]: string } = {
  compute: '#4c78c8',
  memory: '#e8833a',
  communication: '#17a2b8',
  other: '#9467bd',
  idle: '#d65f5f',
  overhead: '#d65f5f',
  cpu: '#3fa36b'
};

/** Human labels for the split categories and bounds. */
export const LABELS: { [key: string]: string } = {
  compute: 'Compute',
  memory: 'Memory',
  communication: 'Communication (exposed)',
  other: 'Other',
  idle: 'Idle (overhead)',
  overhead: 'Overhead',
  cpu: 'CPU'
};

/** The bounds of ops and kernels, in the order that charts stack and name them. */
export const BOUNDS = ['compute', 'memory', 'overhead', 'other', 'cpu'];

/** Colour of a bound; unknown bounds are grey. */
export function boundColor(bound: string): string {
  return COLORS[bound] ?? '#8c8c8c';
}

/** The bottleneck key of a bound label, 'other' for unknown ones. */
export function boundKey(bound: string): string {
  return bound in COLORS ? bound : 'other';
}
