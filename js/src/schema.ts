/**
 * The documents' JSON as the views read it: the parsers of every document kind, and the types
 * they return.
 *
 * The documents as written (the raw JSON) are typed in `./generated/schema_types.ts`, which
 * `jlpm schema:types` generates from the Python schema (`jupyter_brrr/schema/`, the one
 * source), with the constants the two sides share. The parsed types here are derived from
 * those (`Parsed`): the parsers read any document leniently, so a value may be missing or of
 * the wrong type (read as null), some get a default, and the nested objects and tables are
 * parsed in turn.
 *
 * All times are in seconds, sizes in bytes, rates per second. Tables use pandas' "split"
 * orientation without the index; missing numbers are `null`.
 */
import type * as raw from './generated/schema_types';
import {
  CANNOT_PAY_SHARE,
  COMPARISON_SCHEMA_NAME,
  COMPARISON_SCHEMA_VERSION,
  HISTORY_SCHEMA_NAME,
  HISTORY_SCHEMA_VERSION,
  JOB_SCHEMA_NAME,
  JOB_SCHEMA_VERSION,
  SCHEMA_NAME,
  SCHEMA_VERSION
} from './generated/schema_types';

export {
  CANNOT_PAY_SHARE,
  CAUSES,
  COMPARISON_MIME_TYPE,
  COMPARISON_SCHEMA_NAME,
  COMPARISON_SCHEMA_VERSION,
  CPU_OP_COLUMNS,
  HISTORY_MIME_TYPE,
  HISTORY_SCHEMA_NAME,
  HISTORY_SCHEMA_VERSION,
  JOB_CALL_COLUMNS,
  JOB_COLLECTIVE_COLUMNS,
  JOB_LANE_COLUMNS,
  JOB_MIME_TYPE,
  JOB_RANK_COLUMNS,
  JOB_SCHEMA_NAME,
  JOB_SCHEMA_VERSION,
  JOB_SPLIT_PARTS,
  JOB_STEP_COLUMNS,
  KERNEL_COLUMNS,
  MEMORY_CATEGORIES,
  MEMORY_LARGEST_COLUMNS,
  MIME_TYPE,
  MODULE_COLUMNS,
  OPS_COLUMNS,
  REASONS,
  SCHEMA_NAME,
  SCHEMA_VERSION,
  STEP_COLUMNS,
  SWEEP_CAPACITY_COLUMNS,
  SWEEP_DOUBLING_COLUMNS,
  SWEEP_POINT_COLUMNS,
  SWEEP_VERDICTS
} from './generated/schema_types';

/** A value's type as a lenient parser reads it: any text, number or flag, not just the
 * values the schema names (a string of a few choices reads as a string). */
type Widened<V> = V extends string
  ? string
  : V extends number
    ? number
    : V extends boolean
      ? boolean
      : V;

/**
 * An object of a document as its parser returns it, derived from its raw type `T`: every key
 * present, a value missing or of the wrong type read as null; the keys `F` filled in with a
 * default instead (text "", a count, false, an empty array), never null; the keys of `O` of
 * their own type (parsed objects, parsed tables, text made of any cell).
 */
export type Parsed<
  T,
  F extends keyof T = never,
  O extends object = Record<never, never>
> = {
  [K in Exclude<keyof T, F | keyof O>]-?: Widened<NonNullable<T[K]>> | null;
} & {
  [K in Exclude<F, keyof O>]-?: Widened<NonNullable<T[K]>>;
} & O;

/** Cells of any kind (a table's Scalar columns, as the Python schema has them) read as text. */
type Texts<K extends string> = { [P in K]: string };

/** Extras a newer writer may add, kept as they are. */
type Extras = { [extra: string]: unknown };

/** A JSON scalar as found in a table cell. */
export type Cell = string | number | boolean | null;

/** A table in pandas' "split" orientation without the index. */
export interface ITable {
  /** Column names. */
  columns: string[];
  /** Rows, each with one cell per column. */
  data: Cell[][];
}

/** The kernels table, which may be aggregated for large traces: `aggregated` when rows stand
 * for several launches (the `count` column), `total` the launches the trace held in all. */
export type IKernelTable = ITable &
  Parsed<Omit<raw.IRawReport['kernels'], 'columns' | 'data'>, 'aggregated'>;

/** A table with the rows it held before the cut (`total`, where written). */
export type ITableWithTotal = ITable & { total?: number };

/** The device's peak rates that the roofline and classification use; `flops` per dtype,
 * only the positive ones. */
export type IPeaks = Parsed<
  Omit<raw.IRawPeaks, 'memory_bytes'>,
  never,
  { flops: { [dtype: string]: number } }
>;

/** How many times the profiled code ran. */
export type IRuns = Parsed<raw.IRawRuns>;

/** One way in which the timed runs disagree. */
export type ITimingFinding = Parsed<raw.IRawTimingFinding, 'kind' | 'text'>;

/** How the span of a captured report was timed (summary.timing). */
export type ITiming = Parsed<
  Omit<raw.IRawTiming, 'clock' | 'warmup_ended' | 'warmup_sm_clock_mhz'>,
  'protocol' | 'sm_clock_mhz' | 'power_w' | 'host_loop_s',
  { findings: ITimingFinding[] }
>;

/** The summary's keys its parser reads (the others are kept as written). */
type SummaryRead =
  | 'span_s'
  | 'busy_s'
  | 'compute_s'
  | 'memory_s'
  | 'communication_s'
  | 'other_s'
  | 'idle_s'
  | 'device'
  | 'peaks'
  | 'runs'
  | 'peak_memory_bytes'
  | 'memory_capacity_bytes'
  | 'memory_before_bytes'
  | 'memory_increase_bytes'
  | 'memory_after_bytes'
  | 'timing'
  | 'achieved_flops_per_s'
  | 'achieved_bytes_per_s'
  | 'modelled_share'
  | 'gpu'
  | 'warm';

/** Cell-level figures: the span and its split, device, peaks, memory (a part of the split
 * an older report lacks reads as 0). */
export type ISummary = Omit<raw.IRawSummary, SummaryRead> &
  Parsed<
    Pick<raw.IRawSummary, SummaryRead>,
    'communication_s',
    { peaks: IPeaks | null; runs: IRuns | null; timing: ITiming | null }
  > &
  Extras;

/** An op a recommendation rests on. */
export type IAdviceOp = Parsed<
  raw.IRawAdviceOp,
  'name' | 'shapes' | 'module' | 'line'
>;

/** What a recommendation saves, as its writer said it. */
export type ISaving = Parsed<raw.IRawSaving, 'text' | 'not_modelled'>;

/** A fix that needs a code change: the code before and after. */
export type ICodeChange = Parsed<raw.IRawCodeChange, 'before' | 'after'>;

/** The verdict of a recommendation's fix, tried against eager (actions/fixes.py). */
export type ITryVerdict = Parsed<raw.IRawTryVerdict, 'verdict' | 'reason'>;

/** One recommendation: what to try first, and why (the replay's own figures, which the
 * views do not read, are left out). */
export type IRecommendation = Parsed<
  Omit<
    raw.IRawRecommendation,
    'saving_bound_s' | 'predicted_by' | 'changes' | 'not_modelled' | 'requires'
  >,
  'bottleneck' | 'title' | 'detail' | 'cause' | 'evidence' | 'fix' | 'probably',
  {
    ops: IAdviceOp[];
    saving: ISaving | null;
    code_change: ICodeChange | null;
    try: ITryVerdict | null;
  }
>;

/**
 * The A/B variant that applies each cause's fix without editing the code: the Python side's
 * actions/fixes.py FIX_OF_CAUSE (tests/test_try_fix_ui.py holds the two together).
 */
export const FIX_OF_CAUSE: Record<string, string> = {
  'fp32 without tensor cores': 'tf32',
  bf16: 'bf16',
  layout: 'channels_last',
  'launch overhead': 'graph',
  fusion: 'compile',
  'host copy': 'pinned'
};

/** The span split of one A/B variant: its parts and its span, each null where not written. */
export type IABSplit = Parsed<raw.IRawABSplit>;

/** One variant of an A/B comparison (eager, compiled, CUDA graph, ...). */
export type IABVariant = Parsed<
  Omit<
    raw.IRawABVariant,
    'runs' | 'launches' | 'recompiles' | 'graph_breaks' | 'error_line'
  >,
  'name',
  { split: IABSplit | null }
>;

/** An A/B comparison of variants of the same cell (the rest kept as written). */
export type IAB = Omit<raw.IRawAB, 'variants' | 'notes'> & {
  /** The variants, baseline first. */
  variants: IABVariant[];
  /** Plain-language caveats. */
  notes: string[];
} & Extras;

/** The fit of peak memory against size. */
export type ISweepFit = Parsed<Omit<raw.IRawSweepFit, 'coefficients'>, 'kind'>;

/** A size sweep (actions/sweep.py, SweepResult.to_dict()); its tables' rows are
 * raw.IRawSweepPointRow, raw.IRawSweepDoublingRow and raw.IRawSweepCapacityRow. */
export type ISweep = Parsed<
  raw.IRawSweep,
  'schema' | 'version' | 'variable' | 'device' | 'gpu' | 'stopped' | 'notes',
  {
    fit: ISweepFit | null;
    confirmation: { [key: string]: unknown } | null;
    points: ITable;
    doublings: ITable;
    capacity: ITable;
    /** The chart's flat and slope-1 guides, [[size, seconds], [size, seconds]] each. */
    guides: { [name: string]: number[][] };
  }
>;

/** A memory timeline: one series of bytes per category (in stacking order) over the same
 * moments, and the allocator's total at each; every array present, maybe empty. */
export type IMemoryTimeline = Parsed<
  raw.IRawMemoryTimeline,
  'times_s' | 'categories' | 'bytes' | 'allocated'
>;

/** What held the peak memory (memory.py, MemoryBreakdown.to_dict()); the largest
 * allocations' rows are raw.IRawMemoryLargestRow. */
export type IMemory = Parsed<
  raw.IRawMemory,
  'schema' | 'version' | 'device' | 'gpu' | 'at_peak' | 'advice' | 'notes',
  { timeline: IMemoryTimeline; largest: ITable }
>;

/** An axis's range or a line's ends: [low, high]. */
type Pair = [number, number];

/** A compute ceiling of the roofline: one peak (`flops_per_s`), the dtypes that share it,
 * where the bandwidth slope meets it (`ridge`, FLOP/byte; null without a bandwidth), its line
 * from the ridge (or the left edge) to the right edge, its legend text, and whether an op was
 * held against it (drawn strong). */
export type ICeiling = Parsed<
  raw.IRawRooflineCeiling,
  'flops_per_s' | 'dtypes' | 'label' | 'used',
  { x: Pair; ridge: number | null }
>;

/** The roofline's geometry, computed once in Python (jupyter_brrr/views/display.py; recomputed
 * when Python reads a report): the intensity (FLOP/byte) and FLOP/s axes (log), the bandwidth
 * slope up to the highest ridge (null without a bandwidth or a peak) and the compute ceilings,
 * highest first. */
export type IRooflineSpec = Parsed<
  Omit<raw.IRawRooflineSpec, 'x_range' | 'y_range' | 'bandwidth' | 'ceilings'>,
  never,
  {
    x_range: Pair;
    y_range: Pair;
    bandwidth: Parsed<
      raw.IRawRooflineBandwidth,
      'bytes_per_s' | 'label',
      { x: Pair; y: Pair }
    > | null;
    ceilings: ICeiling[];
  }
>;

/** What the renderers draw, computed once in Python (schema version 2 on): the dtype (roof) of
 * most of the modelled GPU FLOPs, whose peak the overview quotes, and the roofline (null for a
 * report without GPU ops to place). */
export type IDisplay = Parsed<
  raw.IRawDisplay,
  never,
  { roofline: IRooflineSpec | null }
>;

/** One thing the What-if can make faster, with its replayed curve. */
export type IWhatIfTarget = Parsed<
  raw.IRawWhatIfTarget,
  | 'id'
  | 'kind'
  | 'key'
  | 'label'
  | 'scalable'
  | 'change'
  | 'factors'
  | 'ratios'
  | 'limit'
>;

/** The What-if's replayed curves. */
export type IWhatIf = Parsed<
  raw.IRawWhatIf,
  'predicted_by' | 'not_modelled' | 'max_factor',
  { targets: IWhatIfTarget[] }
>;

/** The span change of a comparison, with its noise verdict. */
export type ISpanChange = Parsed<
  raw.IRawSpanChange,
  'verdict' | 'reason' | 'explained_by'
>;

/** One side of a comparison. */
export type IComparisonSide = Parsed<
  raw.IRawComparisonSide,
  'label' | 'name' | 'source' | 'device'
>;

/** Two measurements of the same code side by side (jupyter_brrr/report/comparison.py); the
 * tables' rows: IChangeSplitRow, IChangeOpRow, IChangeCategoryRow, IChangeCountRow,
 * IAmdahlRow. */
export type IComparison = Parsed<
  raw.IRawComparison,
  'schema' | 'version' | 'created' | 'gpu' | 'shift' | 'warnings' | 'notes',
  {
    before: IComparisonSide;
    after: IComparisonSide;
    span: ISpanChange;
    split: ITable;
    ops: ITableWithTotal;
    by_name: ITable;
    by_category: ITable;
    kernels: ITableWithTotal;
    counts: ITable;
    amdahl: ITable;
  }
>;

/** A row of a comparison's split table. */
export type IChangeSplitRow = Parsed<
  raw.IRawChangeSplitRow,
  'part' | 'verdict'
>;

/** A row of a comparison's op table. */
export type IChangeOpRow = Parsed<
  raw.IRawChangeOpRow,
  'name' | 'shapes' | 'dtypes' | 'category' | 'status' | 'verdict'
>;

/** A row of a comparison's per-category table. */
export type IChangeCategoryRow = Parsed<
  raw.IRawChangeCategoryRow,
  'category' | 'verdict'
>;

/** A row of a comparison's counts table. */
export type IChangeCountRow = Parsed<raw.IRawChangeCountRow, 'what'>;

/** A row of the Amdahl check: the earlier what-if against the measurement. */
export type IAmdahlRow = Parsed<
  Omit<raw.IRawAmdahlRow, 'predicted_by' | 'not_modelled'>,
  'kind' | 'part'
>;

/** One run of a named cell. */
export type IHistoryRun = Parsed<
  raw.IRawHistoryRun,
  'run' | 'communication_s' | 'settings'
>;

/** A named cell's runs on their own (History.to_dict). */
export type IHistoryDocument = Parsed<
  raw.IRawHistory,
  'schema' | 'version' | 'name',
  { runs: IHistoryRun[] }
>;

/** A way to close a target's gap: fix one part of the split or one op. */
export type ITargetFix = Parsed<
  Omit<raw.IRawTargetFix, 'amdahl_remains_s' | 'predicted_by'>,
  'kind' | 'part' | 'label' | 'closes'
>;

/** The plan for a target (jupyter_brrr/report/target.py). */
export type ITarget = Parsed<
  raw.IRawTargetPlan,
  'met' | 'lines' | 'notes',
  {
    goal: Parsed<
      Omit<raw.IRawTargetGoal, 'value' | 'items' | 'unit'>,
      'text' | 'kind'
    >;
    fixes: ITargetFix[];
    scale: { [key: string]: unknown } | null;
    capacity: { [key: string]: unknown } | null;
  }
>;

/** A whole report document. */
export type IReport = Parsed<
  Omit<raw.IRawReport, 'graph'>,
  'schema' | 'version' | 'name' | 'source' | 'created' | 'notes',
  {
    summary: ISummary;
    recommendations: IRecommendation[];
    ruled_out: IRecommendation[];
    ops: ITable;
    kernels: IKernelTable;
    cpu_ops: ITable;
    steps: ITable;
    modules: ITable;
    ab: IAB | null;
    display: IDisplay | null;
    change: IComparison | null;
    history: IHistoryRun[] | null;
    target: ITarget | null;
    sweep: ISweep | null;
    memory: IMemory | null;
    what_if: IWhatIf | null;
  }
>;

/** A row of the ops table as an object. */
export type IOpRow = Parsed<
  raw.IRawOpRow,
  | 'name'
  | 'shapes'
  | 'dtypes'
  | 'category'
  | 'module'
  | 'bound'
  | 'dtype'
  | 'roof'
  | 'roof_basis'
  | 'roof_flag'
  | 'cost_model'
  | 'regime'
  | 'reason'
  | 'why'
  | 'line'
>;

/** A row of the module tree. */
export type IModuleRow = Parsed<raw.IRawModuleRow, 'path' | 'parent' | 'depth'>;

/** A row of the steps table of a loaded trace. */
export type IStepRow = Parsed<
  Omit<raw.IRawStepRow, 'host_s'>,
  'step' | 'kind' | 'communication_s'
>;

/** A row of the kernels table as an object. */
export type IKernelRow = Parsed<
  raw.IRawKernelRow,
  'name' | 'op' | 'category' | 'bound' | 'module',
  Texts<'stream'>
>;

/** A row of the CPU ops table as an object. */
export type ICpuOpRow = Parsed<raw.IRawCpuOpRow, 'name', Texts<'tid'>>;

/** Raised when a document cannot be read as a report. */
export class ReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportError';
  }
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) {
    return value;
  }
  return null;
}

function str(value: unknown, fallback = ''): string {
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  return fallback;
}

function bool(value: unknown): boolean | null {
  return typeof value === 'boolean' ? value : null;
}

function table(value: unknown, what: string): ITable {
  if (value === undefined || value === null) {
    return { columns: [], data: [] };
  }
  if (!isObject(value) || !Array.isArray(value.columns)) {
    throw new ReportError(
      `This jupyter_brrr report is damaged: "${what}" is not a table.`
    );
  }
  const data = Array.isArray(value.data) ? value.data : [];
  const rows: Cell[][] = [];
  for (const row of data) {
    if (Array.isArray(row)) {
      rows.push(row as Cell[]);
    }
  }
  return {
    ...value,
    columns: value.columns.map(c => str(c)),
    data: rows
  };
}

function parsePeaks(value: unknown): IPeaks | null {
  if (!isObject(value)) {
    return null;
  }
  const flops: { [dtype: string]: number } = {};
  if (isObject(value.flops)) {
    for (const [k, v] of Object.entries(value.flops)) {
      const n = num(v);
      if (n !== null && n > 0) {
        flops[k] = n;
      }
    }
  }
  return {
    device: typeof value.device === 'string' ? value.device : null,
    source: typeof value.source === 'string' ? value.source : null,
    measured: bool(value.measured),
    flops,
    bandwidth: num(value.bandwidth)
  };
}

function parseRuns(value: unknown): IRuns | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    warmup: num(value.warmup),
    timed: num(value.timed),
    profiled: num(value.profiled),
    total: num(value.total)
  };
}

function numbers(value: unknown): (number | null)[] {
  return Array.isArray(value) ? value.map(num) : [];
}

function parseTiming(value: unknown): ITiming | null {
  if (!isObject(value)) {
    return null;
  }
  const findings = Array.isArray(value.findings)
    ? value.findings
        .filter(isObject)
        .map(f => ({ kind: str(f.kind), text: str(f.text) }))
    : [];
  return {
    protocol: str(value.protocol, 'single'),
    warmup_runs: num(value.warmup_runs),
    warmup_s: num(value.warmup_s),
    timed_runs: num(value.timed_runs),
    min_s: num(value.min_s),
    q1_s: num(value.q1_s),
    median_s: num(value.median_s),
    q3_s: num(value.q3_s),
    max_s: num(value.max_s),
    spread: num(value.spread),
    sm_clock_mhz: numbers(value.sm_clock_mhz),
    power_w: numbers(value.power_w),
    sensors: typeof value.sensors === 'string' ? value.sensors : null,
    host_loop_s: numbers(value.host_loop_s),
    host_loop_fastest_s: num(value.host_loop_fastest_s),
    host_slowdown: num(value.host_slowdown),
    findings
  };
}

function parseSummary(value: unknown): ISummary {
  const s = isObject(value) ? value : {};
  return {
    ...s,
    span_s: num(s.span_s),
    busy_s: num(s.busy_s),
    compute_s: num(s.compute_s),
    memory_s: num(s.memory_s),
    communication_s: num(s.communication_s) ?? 0,
    other_s: num(s.other_s),
    idle_s: num(s.idle_s),
    device: typeof s.device === 'string' ? s.device : null,
    peaks: parsePeaks(s.peaks),
    runs: parseRuns(s.runs),
    peak_memory_bytes: num(s.peak_memory_bytes),
    memory_capacity_bytes: num(s.memory_capacity_bytes),
    memory_before_bytes: num(s.memory_before_bytes),
    memory_increase_bytes: num(s.memory_increase_bytes),
    memory_after_bytes: num(s.memory_after_bytes),
    timing: parseTiming(s.timing),
    achieved_flops_per_s: num(s.achieved_flops_per_s),
    achieved_bytes_per_s: num(s.achieved_bytes_per_s),
    modelled_share: num(s.modelled_share),
    gpu: bool(s.gpu),
    warm: bool(s.warm)
  };
}

function parseAdviceOp(value: unknown): IAdviceOp | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    name: str(value.name),
    shapes: str(value.shapes),
    module: str(value.module),
    line: str(value.line),
    calls: num(value.calls),
    time_s: num(value.time_s)
  };
}

function parseRecommendation(value: unknown): IRecommendation | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    bottleneck: str(value.bottleneck, 'other'),
    title: str(value.title),
    detail: str(value.detail),
    share: num(value.share),
    cause: str(value.cause),
    evidence: str(value.evidence),
    fix: str(value.fix),
    ops: Array.isArray(value.ops)
      ? (value.ops.map(parseAdviceOp).filter(o => o) as IAdviceOp[])
      : [],
    saving_s: num(value.saving_s),
    speedup: num(value.speedup),
    probably: value.probably === true,
    saving: parseSaving(value.saving),
    code_change: parseCodeChange(value.code_change),
    try: parseTry(value.try),
    ruled_out:
      typeof value.ruled_out === 'string' && value.ruled_out
        ? value.ruled_out
        : null
  };
}

/**
 * The recommendations to number and those the step's replay rules out: a report's own
 * ruled_out list, and in a report written before it the replayed ones that save under
 * CANNOT_PAY_SHARE (their reason: the saving's sentence), as the Python side does.
 */
function splitRecommendations(
  listed: unknown,
  ruledOut: unknown
): [IRecommendation[], IRecommendation[]] {
  const parse = (values: unknown) =>
    Array.isArray(values)
      ? values
          .filter(isObject)
          .map(v => [v, parseRecommendation(v)] as const)
          .filter(([, r]) => r)
      : [];
  const kept: IRecommendation[] = [];
  const ruled: IRecommendation[] = parse(ruledOut).map(([, r]) => ({
    ...(r as IRecommendation),
    ruled_out: (r as IRecommendation).ruled_out || (r as IRecommendation).detail
  }));
  for (const [value, r] of parse(listed)) {
    const rec = r as IRecommendation;
    const replayed =
      rec.saving?.predicted_by === 'replay' ||
      str(value.predicted_by).startsWith('predicted by replaying');
    if (
      rec.ruled_out ||
      (replayed && rec.share !== null && rec.share < CANNOT_PAY_SHARE)
    ) {
      ruled.push({
        ...rec,
        ruled_out: rec.ruled_out || rec.saving?.text || rec.detail
      });
    } else {
      kept.push(rec);
    }
  }
  return [kept, ruled];
}

function parseSaving(value: unknown): ISaving | null {
  if (!isObject(value) || typeof value.text !== 'string' || !value.text) {
    return null;
  }
  return {
    text: value.text,
    seconds: num(value.seconds),
    low_s: num(value.low_s),
    high_s: num(value.high_s),
    predicted_by:
      typeof value.predicted_by === 'string' ? value.predicted_by : null,
    not_modelled: Array.isArray(value.not_modelled)
      ? value.not_modelled.filter((m): m is string => typeof m === 'string')
      : []
  };
}

function parseCodeChange(value: unknown): ICodeChange | null {
  if (!isObject(value) || typeof value.after !== 'string') {
    return null;
  }
  return {
    before: str(value.before),
    after: value.after,
    line: typeof value.line === 'string' && value.line ? value.line : null
  };
}

function parseTry(value: unknown): ITryVerdict | null {
  if (!isObject(value) || typeof value.verdict !== 'string' || !value.verdict) {
    return null;
  }
  return {
    verdict: value.verdict,
    fix: typeof value.fix === 'string' && value.fix ? value.fix : null,
    reason: str(value.reason),
    predicted_s: num(value.predicted_s),
    predicted_low_s: num(value.predicted_low_s),
    predicted_high_s: num(value.predicted_high_s),
    measured_s: num(value.measured_s),
    measured_low_s: num(value.measured_low_s),
    measured_high_s: num(value.measured_high_s),
    base_s: num(value.base_s),
    fixed_s: num(value.fixed_s),
    correct: bool(value.correct),
    runs: num(value.runs)
  };
}

function parseSplit(value: unknown): IABSplit | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    compute_s: num(value.compute_s),
    memory_s: num(value.memory_s),
    communication_s: num(value.communication_s) ?? 0,
    other_s: num(value.other_s),
    idle_s: num(value.idle_s),
    span_s: num(value.span_s)
  };
}

function parseVariant(value: unknown): IABVariant | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    name: str(value.name, '?'),
    median_s: num(value.median_s),
    iqr_s: num(value.iqr_s),
    speedup: num(value.speedup),
    speedup_low: num(value.speedup_low),
    speedup_high: num(value.speedup_high),
    verdict: typeof value.verdict === 'string' ? value.verdict : null,
    fallback_reason:
      typeof value.fallback_reason === 'string' ? value.fallback_reason : null,
    correct: bool(value.correct),
    max_abs_err: num(value.max_abs_err),
    max_rel_err: num(value.max_rel_err),
    compile_s: num(value.compile_s),
    split: parseSplit(value.split),
    kernel_count: num(value.kernel_count),
    error:
      typeof value.error === 'string' && value.error.length > 0
        ? value.error
        : null
  };
}

function parseAB(value: unknown): IAB | null {
  if (!isObject(value)) {
    return null;
  }
  const variants = Array.isArray(value.variants)
    ? (value.variants.map(parseVariant).filter(v => v) as IABVariant[])
    : [];
  const notes = Array.isArray(value.notes) ? value.notes.map(n => str(n)) : [];
  return { ...value, variants, notes };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(v => str(v)) : [];
}

function parseSide(value: unknown, fallback: string): IComparisonSide {
  const v = isObject(value) ? value : {};
  return {
    label: str(v.label, fallback),
    name: str(v.name),
    created: typeof v.created === 'string' ? v.created : null,
    source: str(v.source),
    device: str(v.device),
    per_run: num(v.per_run),
    run: num(v.run)
  };
}

/**
 * A comparison document (a report's `change`, or the comparison MIME type's data) with
 * defaults filled in; null where it is not one. Throws a ReportError for a newer version.
 */
export function parseComparison(value: unknown): IComparison | null {
  if (!isObject(value) || value.schema !== COMPARISON_SCHEMA_NAME) {
    return null;
  }
  const version = num(value.version) ?? 1;
  if (version > COMPARISON_SCHEMA_VERSION) {
    throw new ReportError(
      `This comparison was written by a newer jupyter_brrr (version ${version}); ` +
        `this extension reads version ${COMPARISON_SCHEMA_VERSION}. Update jupyter_brrr.`
    );
  }
  const sp = isObject(value.span) ? value.span : {};
  const withTotal = (t: unknown, what: string) => {
    const out: ITable & { total?: number } = table(t, what);
    const total = isObject(t) ? num(t.total) : null;
    if (total !== null) {
      out.total = total;
    }
    return out;
  };
  return {
    schema: COMPARISON_SCHEMA_NAME,
    version,
    created: str(value.created),
    gpu: value.gpu !== false,
    before: parseSide(value.before, 'before'),
    after: parseSide(value.after, 'after'),
    span: {
      before_s: num(sp.before_s),
      after_s: num(sp.after_s),
      speedup: num(sp.speedup),
      low: num(sp.low),
      high: num(sp.high),
      verdict: str(sp.verdict, 'uncertain'),
      reason: str(sp.reason),
      runs_before: num(sp.runs_before),
      runs_after: num(sp.runs_after),
      drift: num(sp.drift),
      change: num(sp.change),
      host_before_s: num(sp.host_before_s),
      host_after_s: num(sp.host_after_s),
      explained_by: str(sp.explained_by)
    },
    split: table(value.split, 'change.split'),
    ops: withTotal(value.ops, 'change.ops'),
    by_name: table(value.by_name, 'change.by_name'),
    by_category: table(value.by_category, 'change.by_category'),
    kernels: withTotal(value.kernels, 'change.kernels'),
    counts: table(value.counts, 'change.counts'),
    amdahl: table(value.amdahl, 'change.amdahl'),
    shift: strings(value.shift),
    warnings: strings(value.warnings),
    notes: strings(value.notes)
  };
}

function parseHistoryRun(value: unknown): IHistoryRun | null {
  if (!isObject(value) || num(value.run) === null) {
    return null;
  }
  return {
    run: num(value.run)!,
    created: typeof value.created === 'string' ? value.created : null,
    span_s: num(value.span_s),
    compute_s: num(value.compute_s),
    memory_s: num(value.memory_s),
    communication_s: num(value.communication_s) ?? 0,
    other_s: num(value.other_s),
    idle_s: num(value.idle_s),
    kernel_count: num(value.kernel_count),
    launch_count: num(value.launch_count),
    warm: bool(value.warm),
    device: typeof value.device === 'string' ? value.device : null,
    verdict: typeof value.verdict === 'string' ? value.verdict : null,
    speedup: num(value.speedup),
    code_changed: bool(value.code_changed),
    settings: str(value.settings)
  };
}

function parseHistory(value: unknown): IHistoryRun[] | null {
  if (!Array.isArray(value)) {
    return null;
  }
  return value.map(parseHistoryRun).filter(r => r) as IHistoryRun[];
}

/**
 * A history document (the history MIME type's data) with defaults filled in.
 * Throws a ReportError where it is not one, or for a newer version.
 */
export function parseHistoryDocument(value: unknown): IHistoryDocument {
  if (!isObject(value) || value.schema !== HISTORY_SCHEMA_NAME) {
    throw new ReportError('This output is not a jupyter_brrr history.');
  }
  const version = num(value.version) ?? 1;
  if (version > HISTORY_SCHEMA_VERSION) {
    throw new ReportError(
      `This history was written by a newer jupyter_brrr (version ${version}); ` +
        `this extension reads version ${HISTORY_SCHEMA_VERSION}. Update jupyter_brrr.`
    );
  }
  return {
    schema: HISTORY_SCHEMA_NAME,
    version,
    name: str(value.name),
    runs: parseHistory(value.runs) ?? []
  };
}

function parseTargetFix(value: unknown): ITargetFix | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    kind: str(value.kind),
    part: str(value.part),
    label: str(value.label, str(value.part)),
    time_s: num(value.time_s),
    share: num(value.share),
    remains_s: num(value.remains_s),
    closes: value.closes === true,
    needed_factor: num(value.needed_factor),
    limit: num(value.limit)
  };
}

function parseTarget(value: unknown): ITarget | null {
  if (!isObject(value) || !isObject(value.goal)) {
    return null;
  }
  return {
    goal: {
      text: str(value.goal.text),
      kind: str(value.goal.kind, 'time'),
      span_s: num(value.goal.span_s)
    },
    span_s: num(value.span_s),
    rate: num(value.rate),
    met: value.met === true,
    gap_s: num(value.gap_s),
    speedup_needed: num(value.speedup_needed),
    fixes: Array.isArray(value.fixes)
      ? (value.fixes.map(parseTargetFix).filter(f => f) as ITargetFix[])
      : [],
    scale: isObject(value.scale) ? value.scale : null,
    capacity: isObject(value.capacity) ? value.capacity : null,
    lines: strings(value.lines),
    notes: strings(value.notes)
  };
}

function numberArray(value: unknown): number[] {
  return Array.isArray(value) ? value.map(v => num(v) ?? 0) : [];
}

function parseSweep(value: unknown): ISweep | null {
  if (!isObject(value)) {
    return null;
  }
  const fit = isObject(value.fit)
    ? {
        kind: str(value.fit.kind),
        per_item_bytes: num(value.fit.per_item_bytes),
        fixed_bytes: num(value.fit.fixed_bytes),
        max_miss: num(value.fit.max_miss),
        capacity_bytes: num(value.fit.capacity_bytes),
        predicted_largest: num(value.fit.predicted_largest)
      }
    : null;
  const guides: { [name: string]: number[][] } = {};
  if (isObject(value.guides)) {
    for (const [name, line] of Object.entries(value.guides)) {
      if (Array.isArray(line)) {
        guides[name] = line.map(point => numberArray(point));
      }
    }
  }
  return {
    schema: str(value.schema),
    version: num(value.version) ?? 1,
    variable: str(value.variable, 'size'),
    device: str(value.device),
    gpu: value.gpu === true,
    stopped: str(value.stopped, 'done'),
    oom_at: num(value.oom_at),
    knee: num(value.knee),
    best: num(value.best),
    fit,
    confirmation: isObject(value.confirmation) ? value.confirmation : null,
    elapsed_s: num(value.elapsed_s),
    runs_total: num(value.runs_total),
    points: table(value.points, 'sweep.points'),
    doublings: table(value.doublings, 'sweep.doublings'),
    capacity: table(value.capacity, 'sweep.capacity'),
    guides,
    notes: strings(value.notes)
  };
}

function parseWhatIfTarget(value: unknown): IWhatIfTarget | null {
  if (!isObject(value)) {
    return null;
  }
  const factors = numberArray(value.factors);
  const ratios = numberArray(value.ratios);
  const limit = num(value.limit);
  if (!factors.length || factors.length !== ratios.length || limit === null) {
    return null;
  }
  return {
    id: str(value.id),
    kind: str(value.kind),
    key: str(value.key),
    label: str(value.label),
    name: typeof value.name === 'string' ? value.name : null,
    shapes: typeof value.shapes === 'string' ? value.shapes : null,
    time_s: num(value.time_s),
    share: num(value.share),
    scalable: value.scalable !== false,
    change: str(value.change),
    factors,
    ratios,
    limit
  };
}

function parseWhatIf(value: unknown): IWhatIf | null {
  if (!isObject(value) || !Array.isArray(value.targets)) {
    return null;
  }
  const targets = value.targets
    .map(parseWhatIfTarget)
    .filter(t => t) as IWhatIfTarget[];
  if (!targets.length) {
    return null;
  }
  return {
    predicted_by: str(value.predicted_by),
    not_modelled: strings(value.not_modelled),
    max_factor: num(value.max_factor) ?? 100,
    targets
  };
}

function parseMemory(value: unknown): IMemory | null {
  if (!isObject(value)) {
    return null;
  }
  const atPeak: { [category: string]: number } = {};
  if (isObject(value.at_peak)) {
    for (const [name, bytes] of Object.entries(value.at_peak)) {
      atPeak[name] = num(bytes) ?? 0;
    }
  }
  const raw = isObject(value.timeline) ? value.timeline : {};
  const timeline: IMemoryTimeline = {
    times_s: numberArray(raw.times_s),
    categories: strings(raw.categories),
    bytes: Array.isArray(raw.bytes) ? raw.bytes.map(numberArray) : [],
    allocated: numberArray(raw.allocated)
  };
  return {
    schema: str(value.schema),
    version: num(value.version) ?? 1,
    device: str(value.device),
    gpu: value.gpu === true,
    peak_bytes: num(value.peak_bytes),
    peak_time_s: num(value.peak_time_s),
    allocator_peak_bytes: num(value.allocator_peak_bytes),
    before_bytes: num(value.before_bytes),
    capacity_bytes: num(value.capacity_bytes),
    at_peak: atPeak,
    unattributed_bytes: num(value.unattributed_bytes),
    timeline,
    largest: table(value.largest, 'memory.largest'),
    advice: strings(value.advice),
    notes: strings(value.notes)
  };
}

function pair(value: unknown): [number, number] | null {
  if (!Array.isArray(value) || value.length !== 2) {
    return null;
  }
  const [a, b] = [num(value[0]), num(value[1])];
  return a === null || b === null ? null : [a, b];
}

function parseRoofline(value: unknown): IRooflineSpec | null {
  if (!isObject(value)) {
    return null;
  }
  const x = pair(value.x_range);
  const y = pair(value.y_range);
  if (!x || !y) {
    return null;
  }
  const bw = isObject(value.bandwidth) ? value.bandwidth : null;
  const bwx = bw ? pair(bw.x) : null;
  const bwy = bw ? pair(bw.y) : null;
  const bwv = bw ? num(bw.bytes_per_s) : null;
  const ceilings: ICeiling[] = [];
  for (const c of Array.isArray(value.ceilings) ? value.ceilings : []) {
    const peak = isObject(c) ? num(c.flops_per_s) : null;
    const cx = isObject(c) ? pair(c.x) : null;
    if (!isObject(c) || peak === null || !cx) {
      continue;
    }
    ceilings.push({
      flops_per_s: peak,
      dtypes: strings(c.dtypes),
      ridge: num(c.ridge),
      x: cx,
      label: str(c.label),
      used: c.used === true
    });
  }
  return {
    x_range: x,
    y_range: y,
    bandwidth:
      bw && bwx && bwy && bwv !== null
        ? { bytes_per_s: bwv, x: bwx, y: bwy, label: str(bw.label) }
        : null,
    ceilings
  };
}

function parseDisplay(value: unknown): IDisplay | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    main_dtype: typeof value.main_dtype === 'string' ? value.main_dtype : null,
    roofline: parseRoofline(value.roofline)
  };
}

/**
 * Validate a document and return it as a report with defaults filled in.
 *
 * Throws a ReportError with a message fit for a user when the document is
 * not a jupyter_brrr report, or was written by a newer schema version.
 */
export function parseReport(data: unknown): IReport {
  let doc = data;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc);
    } catch {
      throw new ReportError('This output is not a jupyter_brrr report.');
    }
  }
  if (!isObject(doc) || doc.schema !== SCHEMA_NAME) {
    throw new ReportError('This output is not a jupyter_brrr report.');
  }
  const version = doc.version;
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    throw new ReportError(
      'This jupyter_brrr report has no schema version; it cannot be read.'
    );
  }
  if (version > SCHEMA_VERSION) {
    throw new ReportError(
      `This report was written by a newer jupyter_brrr (schema version ${version}); ` +
        `this extension reads version ${SCHEMA_VERSION}. Update jupyter_brrr.`
    );
  }
  if (version < 1) {
    throw new ReportError(
      `This jupyter_brrr report has an unknown schema version (${version}).`
    );
  }
  // A comparison from a newer jupyter_brrr leaves the rest of the report readable.
  let change: IComparison | null = null;
  const notes = strings(doc.notes);
  try {
    change = parseComparison(doc.change);
  } catch (err) {
    notes.push(err instanceof Error ? err.message : String(err));
  }
  const [recommendations, ruledOut] = splitRecommendations(
    doc.recommendations,
    doc.ruled_out
  );
  const kernels = table(doc.kernels, 'kernels') as IKernelTable;
  const rawKernels = isObject(doc.kernels) ? doc.kernels : {};
  kernels.aggregated = rawKernels.aggregated === true;
  kernels.total = num(rawKernels.total);
  return {
    schema: SCHEMA_NAME,
    version,
    name: str(doc.name, 'report'),
    source: str(doc.source),
    created: str(doc.created),
    summary: parseSummary(doc.summary),
    notes,
    recommendations,
    ruled_out: ruledOut,
    ops: table(doc.ops, 'ops'),
    kernels,
    cpu_ops: table(doc.cpu_ops, 'cpu_ops'),
    steps: table(doc.steps, 'steps'),
    modules: table(doc.modules, 'modules'),
    ab: parseAB(doc.ab),
    // The re-measure loop: absent from reports of unnamed cells and from older reports.
    change,
    history: parseHistory(doc.history),
    target: parseTarget(doc.target),
    sweep: parseSweep(doc.sweep),
    memory: parseMemory(doc.memory),
    display: parseDisplay(doc.display),
    what_if: parseWhatIf(doc.what_if)
  };
}

/**
 * Turn a split table into one object per row, keyed by column name.
 *
 * Cells past the end of a short row are `null`.
 */
export function tableRows<T = { [column: string]: Cell }>(t: ITable): T[] {
  const { columns, data } = t;
  const n = columns.length;
  const out: T[] = new Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const row = data[i];
    const obj: { [column: string]: Cell } = {};
    for (let j = 0; j < n; j++) {
      const v = row[j];
      obj[columns[j]] = v === undefined ? null : v;
    }
    out[i] = obj as T;
  }
  return out;
}

/** The ops table as typed rows: numbers as number|null, text as string. */
export function opRows(report: IReport): IOpRow[] {
  return tableRows<{ [column: string]: Cell }>(report.ops).map(r => ({
    name: str(r.name, '?'),
    shapes: str(r.shapes),
    dtypes: str(r.dtypes),
    category: str(r.category, 'other'),
    module: str(r.module),
    calls: num(r.calls),
    gpu_time_s: num(r.gpu_time_s),
    total_gpu_time_s: num(r.total_gpu_time_s),
    cpu_time_s: num(r.cpu_time_s),
    self_cpu_time_s: num(r.self_cpu_time_s),
    kernels: num(r.kernels),
    flops: num(r.flops),
    bytes: num(r.bytes),
    intensity: num(r.intensity),
    flops_per_s: num(r.flops_per_s),
    bytes_per_s: num(r.bytes_per_s),
    roof_fraction: num(r.roof_fraction),
    bound: str(r.bound, 'other'),
    dtype: str(r.dtype),
    roof: str(r.roof, str(r.dtype)),
    roof_basis: str(r.roof_basis),
    roof_flag: str(r.roof_flag),
    cost_model: str(r.cost_model),
    regime: str(r.regime),
    reason: str(r.reason),
    why: str(r.why),
    line: str(r.line)
  }));
}

/** The module tree as typed rows. */
export function moduleRows(report: IReport): IModuleRow[] {
  return tableRows<{ [column: string]: Cell }>(report.modules).map(r => ({
    path: str(r.path),
    parent: str(r.parent),
    depth: num(r.depth) ?? 0,
    calls: num(r.calls),
    kernels: num(r.kernels),
    self_gpu_time_s: num(r.self_gpu_time_s),
    gpu_time_s: num(r.gpu_time_s),
    self_cpu_time_s: num(r.self_cpu_time_s),
    cpu_time_s: num(r.cpu_time_s)
  }));
}

/** The steps table as typed rows. */
export function stepRows(report: IReport): IStepRow[] {
  return tableRows<{ [column: string]: Cell }>(report.steps).map(r => ({
    step: str(r.step, '?'),
    kind: str(r.kind),
    start_s: num(r.start_s),
    span_s: num(r.span_s),
    busy_s: num(r.busy_s),
    compute_s: num(r.compute_s),
    memory_s: num(r.memory_s),
    communication_s: num(r.communication_s) ?? 0,
    other_s: num(r.other_s),
    idle_s: num(r.idle_s),
    kernels: num(r.kernels)
  }));
}

/** The kernels table as typed rows. */
export function kernelRows(report: IReport): IKernelRow[] {
  return tableRows<{ [column: string]: Cell }>(report.kernels).map(r => ({
    name: str(r.name, '?'),
    op: str(r.op),
    category: str(r.category, 'other'),
    stream: str(r.stream, '0'),
    start_s: num(r.start_s),
    dur_s: num(r.dur_s),
    count: num(r.count),
    flops: num(r.flops),
    bytes: num(r.bytes),
    bound: str(r.bound, 'other'),
    module: str(r.module)
  }));
}

/** The CPU ops table as typed rows. */
export function cpuOpRows(report: IReport): ICpuOpRow[] {
  return tableRows<{ [column: string]: Cell }>(report.cpu_ops).map(r => ({
    name: str(r.name, '?'),
    tid: str(r.tid, '0'),
    start_s: num(r.start_s),
    dur_s: num(r.dur_s)
  }));
}

/** True when the report describes a run without a GPU. */
export function isCpuOnly(report: IReport): boolean {
  const s = report.summary;
  return s.gpu === false || (s.device ?? '').toUpperCase() === 'CPU';
}

/*
 * The job report: the ranks of one torch.distributed run (`jupyter_brrr/report/job.py`,
 * `jupyter_brrr/schema/job.py`). A document of its own, under its own MIME type; the Ranks
 * view draws it. Tables in the same "split" orientation.
 */

/** The straggler's figures present where written (the parser leaves them out otherwise). */
type StragglerOptional =
  'last_count' | 'share' | 'lateness_s' | 'others_wait_s' | 'steps' | 'varies';

/** Who holds the others back, and the figures that say so. */
export type IJobStraggler = Parsed<
  Omit<raw.IRawJobStraggler, StragglerOptional>,
  'decided' | 'collectives'
> &
  Partial<
    Parsed<Pick<raw.IRawJobStraggler, StragglerOptional>, StragglerOptional>
  >;

/** Job-level figures (extras kept as written). */
export type IJobSummary = Parsed<
  raw.IRawJobSummary,
  | 'ranks'
  | 'world_size'
  | 'backend'
  | 'devices'
  | 'gpu'
  | 'hosts'
  | 'one_clock'
  | 'span_s'
  | 'comm_s'
  | 'exposed_comm_s'
  | 'work_median_s'
  | 'work_max_s'
  | 'link_source'
  | 'collective_calls',
  { steps: number[]; straggler: IJobStraggler }
> &
  Extras;

/** One piece of job advice, with the figures it rests on. */
export type IJobRecommendation = Parsed<
  raw.IRawJobRecommendation,
  'kind' | 'title' | 'detail'
>;

/** A whole job document; its tables' columns: JOB_RANK_COLUMNS, JOB_COLLECTIVE_COLUMNS,
 * JOB_STEP_COLUMNS, JOB_CALL_COLUMNS (the first calls where there are more than 20,000,
 * `total` the calls in all) and JOB_LANE_COLUMNS. */
export type IJob = Parsed<
  raw.IRawJob,
  'schema' | 'version' | 'name' | 'created' | 'notes',
  {
    summary: IJobSummary;
    recommendations: IJobRecommendation[];
    ranks: ITable;
    collectives: ITable;
    steps: ITable;
    calls: ITableWithTotal;
    lanes: ITable;
  }
>;

/** A row of the job's ranks table (JOB_RANK_COLUMNS). */
export type IJobRankRow = Parsed<
  raw.IRawJobRankRow,
  'rank' | 'file' | 'host' | 'device' | 'backend'
>;

/** A row of the job's collectives table (JOB_COLLECTIVE_COLUMNS). */
export type IJobCollectiveRow = Parsed<
  raw.IRawJobCollectiveRow,
  'op',
  Texts<'group' | 'dtype' | 'where' | 'algorithm'>
>;

/** A row of the job's steps table (JOB_STEP_COLUMNS): one profiler step of one rank. */
export type IJobStepRow = Parsed<
  raw.IRawJobStepRow,
  'rank' | 'kind',
  { step: number | null }
>;

/** A row of the job's calls table (JOB_CALL_COLUMNS): one collective call of one rank. */
export type IJobCallRow = Parsed<
  raw.IRawJobCallRow,
  'rank',
  Texts<'instance' | 'group' | 'op' | 'dtype' | 'where'> & {
    step: number | null;
  }
>;

/** A row of the job's lanes table (JOB_LANE_COLUMNS): one interval of a rank's activity. */
export type IJobLaneRow = Parsed<
  raw.IRawJobLaneRow,
  'rank' | 'part' | 'start_s' | 'end_s'
>;

function rowsOf(t: ITable): { [column: string]: Cell }[] {
  return tableRows<{ [column: string]: Cell }>(t);
}

/** A comparison's split table as typed rows. */
export function changeSplitRows(c: IComparison): IChangeSplitRow[] {
  return rowsOf(c.split).map(r => ({
    part: str(r.part),
    before_s: num(r.before_s),
    after_s: num(r.after_s),
    delta_s: num(r.delta_s),
    before_share: num(r.before_share),
    after_share: num(r.after_share),
    verdict: str(r.verdict)
  }));
}

/** A comparison's op table as typed rows. */
export function changeOpRows(c: IComparison): IChangeOpRow[] {
  return rowsOf(c.ops).map(r => ({
    name: str(r.name, '?'),
    shapes: str(r.shapes),
    dtypes: str(r.dtypes),
    category: str(r.category),
    calls_before: num(r.calls_before),
    calls_after: num(r.calls_after),
    time_before_s: num(r.time_before_s),
    time_after_s: num(r.time_after_s),
    share_before: num(r.share_before),
    share_after: num(r.share_after),
    delta_s: num(r.delta_s),
    status: str(r.status, 'both'),
    verdict: str(r.verdict)
  }));
}

/** A comparison's per-category table as typed rows (empty in older comparisons). */
export function changeCategoryRows(c: IComparison): IChangeCategoryRow[] {
  return rowsOf(c.by_category).map(r => ({
    category: str(r.category),
    ops: num(r.ops),
    calls_before: num(r.calls_before),
    calls_after: num(r.calls_after),
    time_before_s: num(r.time_before_s),
    time_after_s: num(r.time_after_s),
    share_before: num(r.share_before),
    share_after: num(r.share_after),
    delta_s: num(r.delta_s),
    verdict: str(r.verdict)
  }));
}

/** A comparison's counts table as typed rows. */
export function changeCountRows(c: IComparison): IChangeCountRow[] {
  return rowsOf(c.counts).map(r => ({
    what: str(r.what),
    before: num(r.before),
    after: num(r.after)
  }));
}

/** A comparison's Amdahl check as typed rows. */
export function amdahlRows(c: IComparison): IAmdahlRow[] {
  return rowsOf(c.amdahl).map(r => ({
    kind: str(r.kind),
    part: str(r.part),
    share_before: num(r.share_before),
    time_before_s: num(r.time_before_s),
    time_after_s: num(r.time_after_s),
    part_speedup: num(r.part_speedup),
    predicted_speedup: num(r.predicted_speedup),
    predicted_low: num(r.predicted_low),
    predicted_high: num(r.predicted_high),
    predicted_span_s: num(r.predicted_span_s),
    measured_speedup: num(r.measured_speedup),
    limit: num(r.limit)
  }));
}

function parseStraggler(value: unknown): IJobStraggler {
  const v = isObject(value) ? value : {};
  const out: IJobStraggler = {
    rank: num(v.rank),
    decided: num(v.decided) ?? 0,
    collectives: num(v.collectives) ?? 0,
    noise_s: num(v.noise_s),
    lateness_per_step_s: num(v.lateness_per_step_s),
    others_wait_per_step_s: num(v.others_wait_per_step_s)
  };
  for (const key of [
    'last_count',
    'share',
    'lateness_s',
    'others_wait_s',
    'steps'
  ] as const) {
    const n = num(v[key]);
    if (n !== null) {
      out[key] = n;
    }
  }
  if (isObject(v.varies)) {
    out.varies = {};
    for (const [k, n] of Object.entries(v.varies)) {
      out.varies[k] = num(n) ?? 0;
    }
  }
  return out;
}

/**
 * Validate a job document and return it with defaults filled in. Throws a ReportError
 * with a message fit for a user when it is not a job report or is from a newer version.
 */
export function parseJob(data: unknown): IJob {
  let doc = data;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc);
    } catch {
      doc = null;
    }
  }
  if (!isObject(doc) || doc.schema !== JOB_SCHEMA_NAME) {
    throw new ReportError('This output is not a jupyter_brrr job report.');
  }
  const version = num(doc.version);
  if (version === null || !Number.isInteger(version) || version < 1) {
    throw new ReportError(
      'This jupyter_brrr job report has no valid schema version; it cannot be read.'
    );
  }
  if (version > JOB_SCHEMA_VERSION) {
    throw new ReportError(
      `This job report was written by a newer jupyter_brrr (schema version ${version}); ` +
        `this extension reads version ${JOB_SCHEMA_VERSION}. Update jupyter_brrr.`
    );
  }
  const s = isObject(doc.summary) ? doc.summary : {};
  const nums = (v: unknown) =>
    Array.isArray(v) ? (v.map(num).filter(n => n !== null) as number[]) : [];
  const calls = table(doc.calls, 'calls') as IJob['calls'];
  const total = isObject(doc.calls) ? num(doc.calls.total) : null;
  if (total !== null) {
    calls.total = total;
  }
  return {
    schema: JOB_SCHEMA_NAME,
    version,
    name: str(doc.name, 'job'),
    created: str(doc.created),
    summary: {
      ...s,
      ranks: nums(s.ranks),
      world_size: num(s.world_size) ?? 0,
      backend: str(s.backend),
      devices: strings(s.devices),
      gpu: s.gpu === true,
      hosts: strings(s.hosts),
      one_clock: s.one_clock === true,
      steps: nums(s.steps),
      span_s: num(s.span_s) ?? 0,
      comm_s: num(s.comm_s) ?? 0,
      exposed_comm_s: num(s.exposed_comm_s) ?? 0,
      exposed_share: num(s.exposed_share),
      overlap: num(s.overlap),
      work_median_s: num(s.work_median_s) ?? 0,
      work_max_s: num(s.work_max_s) ?? 0,
      busiest_rank: num(s.busiest_rank),
      imbalance: num(s.imbalance),
      straggler: parseStraggler(s.straggler),
      link_source: str(s.link_source),
      collective_calls: num(s.collective_calls) ?? 0
    },
    notes: strings(doc.notes),
    recommendations: Array.isArray(doc.recommendations)
      ? doc.recommendations.filter(isObject).map(r => ({
          kind: str(r.kind),
          title: str(r.title),
          detail: str(r.detail),
          share: num(r.share)
        }))
      : [],
    ranks: table(doc.ranks, 'ranks'),
    collectives: table(doc.collectives, 'collectives'),
    steps: table(doc.steps, 'steps'),
    calls,
    lanes: table(doc.lanes, 'lanes')
  };
}

/** The job's ranks as typed rows, in rank order. */
export function jobRankRows(job: IJob): IJobRankRow[] {
  return rowsOf(job.ranks)
    .map(r => ({
      rank: num(r.rank) ?? -1,
      file: str(r.file),
      host: str(r.host),
      device: str(r.device),
      backend: str(r.backend),
      span_s: num(r.span_s),
      compute_s: num(r.compute_s),
      memory_s: num(r.memory_s),
      other_s: num(r.other_s),
      communication_s: num(r.communication_s),
      idle_s: num(r.idle_s),
      work_s: num(r.work_s),
      comm_s: num(r.comm_s),
      hidden_comm_s: num(r.hidden_comm_s),
      overlap: num(r.overlap),
      calls: num(r.calls),
      last_count: num(r.last_count),
      lateness_s: num(r.lateness_s),
      wait_s: num(r.wait_s),
      clock_offset_s: num(r.clock_offset_s)
    }))
    .sort((a, b) => a.rank - b.rank);
}

/** The job's collectives as typed rows. */
export function jobCollectiveRows(job: IJob): IJobCollectiveRow[] {
  return rowsOf(job.collectives).map(r => ({
    group: str(r.group),
    group_size: num(r.group_size),
    op: str(r.op, '?'),
    bytes: num(r.bytes),
    dtype: str(r.dtype),
    where: str(r.where),
    calls: num(r.calls),
    time_s: num(r.time_s),
    median_s: num(r.median_s),
    algbw: num(r.algbw),
    busbw: num(r.busbw),
    link_peak: num(r.link_peak),
    link_fraction: num(r.link_fraction),
    algorithm: str(r.algorithm),
    ranks: num(r.ranks)
  }));
}

/** The job's profiler steps as typed rows. */
export function jobStepRows(job: IJob): IJobStepRow[] {
  return rowsOf(job.steps).map(r => ({
    rank: num(r.rank) ?? -1,
    step: num(r.step),
    kind: str(r.kind),
    start_s: num(r.start_s),
    span_s: num(r.span_s),
    compute_s: num(r.compute_s),
    memory_s: num(r.memory_s),
    other_s: num(r.other_s),
    comm_s: num(r.comm_s),
    exposed_comm_s: num(r.exposed_comm_s),
    last_count: num(r.last_count),
    lateness_s: num(r.lateness_s),
    wait_s: num(r.wait_s)
  }));
}

/** The job's collective calls as typed rows. */
export function jobCallRows(job: IJob): IJobCallRow[] {
  return rowsOf(job.calls).map(r => ({
    rank: num(r.rank) ?? -1,
    instance: str(r.instance),
    group: str(r.group),
    op: str(r.op, '?'),
    bytes: num(r.bytes),
    dtype: str(r.dtype),
    where: str(r.where),
    step: num(r.step),
    enqueue_s: num(r.enqueue_s),
    arrival_s: num(r.arrival_s),
    start_s: num(r.start_s),
    end_s: num(r.end_s)
  }));
}

/** The job's lanes as typed rows; intervals without both ends are dropped. */
export function jobLaneRows(job: IJob): IJobLaneRow[] {
  const out: IJobLaneRow[] = [];
  for (const r of rowsOf(job.lanes)) {
    const rank = num(r.rank);
    const start = num(r.start_s);
    const end = num(r.end_s);
    if (rank !== null && start !== null && end !== null) {
      out.push({ rank, part: str(r.part), start_s: start, end_s: end });
    }
  }
  return out;
}
