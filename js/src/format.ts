/**
 * Number formatting for the report views. Every function returns plain text.
 *
 * fmtTime, fmtSI, fmtBytes and sig follow jupyter_brrr/report/display.py, which
 * the Python views use: the cases in tests/data/display_cases.json hold the
 * two together (js/src/__tests__/format.spec.ts, tests/test_display.py).
 */

const DASH = '\u2014';

/** A duration in seconds, with a unit that keeps 3 significant digits. */
export function fmtTime(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) {
    return DASH;
  }
  const a = Math.abs(s);
  if (a === 0) {
    return '0 s';
  }
  if (a >= 1) {
    return `${sig(s)} s`;
  }
  if (a >= 1e-3) {
    return `${sig(s * 1e3)} ms`;
  }
  if (a >= 1e-6) {
    return `${sig(s * 1e6)} \u00b5s`;
  }
  return `${sig(s * 1e9)} ns`;
}

/**
 * A number to 3 significant digits without trailing zeros, in exponent form
 * below 0.001 and from 1e6 (the rule of jupyter_brrr/report/display.py `sig`).
 */
export function sig(x: number, digits = 3): string {
  if (!Number.isFinite(x)) {
    return DASH;
  }
  const a = Math.abs(x);
  if (a === 0) {
    return '0';
  }
  if (a >= 1e6 || a < 1e-3) {
    const [mantissa, exponent] = x.toExponential(digits - 1).split('e');
    return `${trim(mantissa)}e${exponent}`;
  }
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(a)));
  return trim(x.toFixed(Math.min(decimals, 6)));
}

/** "4.80" -> "4.8", "100.0" -> "100", "1.00" -> "1". */
function trim(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

const SI = [
  { p: 1e18, s: 'E' },
  { p: 1e15, s: 'P' },
  { p: 1e12, s: 'T' },
  { p: 1e9, s: 'G' },
  { p: 1e6, s: 'M' },
  { p: 1e3, s: 'k' }
];

/** A quantity with an SI prefix: fmtSI(7.87e14, 'FLOP/s') -> "787 TFLOP/s". */
export function fmtSI(x: number | null | undefined, unit: string): string {
  if (x === null || x === undefined || !Number.isFinite(x)) {
    return DASH;
  }
  const a = Math.abs(x);
  for (const { p, s } of SI) {
    if (a >= p) {
      return `${sig(x / p)} ${s}${unit}`;
    }
  }
  return `${sig(x)} ${unit}`;
}

/** Bytes in decimal units (GB etc.), as the Python views and the datasheets write them. */
/**
 * One label per meaning of a GPU's memory, as the Python views (views/format.py): what the
 * board has, what this process's allocator may reach, a datasheet's figure.
 */
export const DEVICE_MEMORY = 'device memory';
export const REACHABLE_MEMORY = 'this process can reach';
export const NOMINAL_MEMORY = 'nominal';

export function fmtBytes(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) {
    return DASH;
  }
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = x;
  let i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? String(Math.round(v)) : sig(v)} ${units[i]}`;
}

/** A fraction as a percentage: 0.123 -> "12.3%". */
export function fmtPct(f: number | null | undefined, digits = 1): string {
  if (f === null || f === undefined || !Number.isFinite(f)) {
    return DASH;
  }
  const pct = f * 100;
  if (pct !== 0 && Math.abs(pct) < 0.1) {
    return '<0.1%';
  }
  return `${pct.toFixed(digits)}%`;
}

/** A plain count with thousands separators. */
export function fmtInt(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) {
    return DASH;
  }
  return Math.round(x).toLocaleString('en-US');
}

/** A speed-up factor: 2.345 -> "2.35x". */
export function fmtX(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) {
    return DASH;
  }
  return `${sig(x)}\u00d7`;
}

/** Shorten long text for chart labels, keeping the start and the end. */
export function ellipsize(text: string, max = 48): string {
  if (text.length <= max) {
    return text;
  }
  const head = Math.ceil((max - 1) * 0.7);
  const tail = max - 1 - head;
  return `${text.slice(0, head)}\u2026${text.slice(text.length - tail)}`;
}

/** Which run the op times come from, in words, as the Python views say it
 * (jupyter_brrr/views/format.py, profiled_scope): "in the profiled run", "in the
 * 3 profiled runs", "in the trace" (a loaded one). */
export function profiledScope(
  runs: { total?: number | null; profiled?: number | null } | null
): string {
  if ((runs?.total ?? null) === null) {
    return 'in the trace';
  }
  const profiled = runs?.profiled || 1;
  return profiled === 1
    ? 'in the profiled run'
    : `in the ${profiled} profiled runs`;
}
