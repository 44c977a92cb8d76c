/**
 * The report's JSON form: the TypeScript twin of `jupyter_brrr/schema.py`.
 *
 * All times are in seconds, sizes in bytes, rates per second. Tables use
 * pandas' "split" orientation without the index; missing numbers are `null`.
 */

/** The value of a report document's `schema` field. */
export const SCHEMA_NAME = 'jupyter_brrr.report';

/** The schema version this extension reads. */
export const SCHEMA_VERSION = 2;

/** The MIME type of a report in a notebook output bundle. */
export const MIME_TYPE = 'application/vnd.jupyter-brrr.report+json';

/** A JSON scalar as found in a table cell. */
export type Cell = string | number | boolean | null;

/** A table in pandas' "split" orientation without the index. */
export interface ITable {
  /** Column names. */
  columns: string[];
  /** Rows, each with one cell per column. */
  data: Cell[][];
}

/** The kernels table, which may be aggregated for large traces. */
export interface IKernelTable extends ITable {
  /** True when rows stand for several launches (see the `count` column). */
  aggregated?: boolean;
  /** How many kernel launches the trace held in all. */
  total?: number | null;
}

/** The device's peak rates that the roofline and classification use. */
export interface IPeaks {
  /** Device name these peaks belong to. */
  device?: string | null;
  /** Where the numbers come from, e.g. "datasheet" or "measured". */
  source?: string | null;
  /** True when the peaks were measured on this machine. */
  measured?: boolean | null;
  /** Peak FLOP/s per compute dtype, e.g. {"bf16": 9.9e14, "fp32": 6.7e13}. */
  flops: { [dtype: string]: number };
  /** Peak memory bandwidth in bytes/s. */
  bandwidth: number | null;
}

/** How many times the profiled code ran. */
export interface IRuns {
  /** Warm-up runs before measuring. */
  warmup?: number | null;
  /** Runs timed with CUDA events. */
  timed?: number | null;
  /** Runs under the profiler. */
  profiled?: number | null;
  /** All runs together. */
  total?: number | null;
}

/** One way in which the timed runs disagree. */
export interface ITimingFinding {
  /**
   * "warmup" (the first runs still warming up), "levels" (two speed levels), "trend" (a drift),
   * "spread" (a wide spread), "host" (the host CPU's speed changed while the runs ran) or
   * "host_slow" (the host ran slower than its best).
   */
  kind: string;
  /** What it means, in words. */
  text: string;
}

/** How the span of a captured report was timed (summary.timing). */
export interface ITiming {
  /** "single" (one profiled run), "sustained" (warm-up to the GPU's steady clock) or "burst". */
  protocol: string;
  /** Warm-up runs before the timed runs. */
  warmup_runs: number | null;
  /** Wall time of the warm-up, in seconds. */
  warmup_s: number | null;
  /** Runs timed without the profiler. */
  timed_runs: number | null;
  /** Fastest timed run. */
  min_s: number | null;
  /** First quartile of the timed runs. */
  q1_s: number | null;
  /** Median of the timed runs (the span). */
  median_s: number | null;
  /** Third quartile of the timed runs. */
  q3_s: number | null;
  /** Slowest timed run. */
  max_s: number | null;
  /** IQR over median (the range over median for fewer than four runs). */
  spread: number | null;
  /** SM clock in MHz read after each timed run; null where it could not be read. */
  sm_clock_mhz: (number | null)[];
  /** Power draw in W read after each timed run. */
  power_w: (number | null)[];
  /** Why there are no clock readings, where there are none. */
  sensors: string | null;
  /** The host CPU's speed after each timed run: seconds of a fixed Python loop. */
  host_loop_s: (number | null)[];
  /** The fastest such reading in the process: the host at its best. */
  host_loop_fastest_s: number | null;
  /** The timed runs' median host reading over the fastest (1 = the host at its best). */
  host_slowdown: number | null;
  /** How the timed runs disagree; empty when they agree. */
  findings: ITimingFinding[];
}

/** Cell-level figures: the span and its split, device, peaks, memory. */
export interface ISummary {
  /** Wall-clock span of the GPU work of one run. */
  span_s: number | null;
  /** Time at least one kernel or copy ran, per run (interval union over streams). */
  busy_s: number | null;
  /** Part of busy_s spent in compute-bound kernels. */
  compute_s: number | null;
  /** Part of busy_s spent in memory-bound kernels. */
  memory_s: number | null;
  /** Part of busy_s in collectives with no other GPU work beside them (0 in older reports). */
  communication_s: number | null;
  /** Part of busy_s in copies, unmodelled and launch-sized kernels. */
  other_s: number | null;
  /** span_s - busy_s: the GPU ran nothing (overhead). */
  idle_s: number | null;
  /** Device name, e.g. "NVIDIA H200", or "CPU". */
  device: string | null;
  /** Peak rates of the device. */
  peaks: IPeaks | null;
  /** How many times the code ran. */
  runs: IRuns | null;
  /** Peak device memory in use. */
  peak_memory_bytes: number | null;
  /** Device memory capacity. */
  memory_capacity_bytes: number | null;
  /** Optional: memory allocated when the profiled run started. */
  memory_before_bytes?: number | null;
  /** Optional: what one run needed on top of that (peak minus before). */
  memory_increase_bytes?: number | null;
  /** Optional: memory allocated after the run, its value held. */
  memory_after_bytes?: number | null;
  /** Optional: how the span was timed; null for a loaded trace. */
  timing?: ITiming | null;
  /** Modelled FLOPs over busy_s; null where no op has a cost model. */
  achieved_flops_per_s: number | null;
  /** Modelled bytes over busy_s; null where no op has a cost model. */
  achieved_bytes_per_s: number | null;
  /** Share of the GPU time with a FLOP and byte model (0..1); null without GPU work. */
  modelled_share: number | null;
  /** Optional: false when no GPU was found. */
  gpu?: boolean | null;
  /** Optional: true when the numbers are steady-state (warm), false for a first run. */
  warm?: boolean | null;
  /** Optional: of busy_s, kernels shorter than a launch (compute-bound at best). */
  overhead_kernels_s?: number | null;
  /** Optional: gaps between GPU work in the span (null without GPU work). */
  idle_gap_count?: number | null;
  /** Optional: collectives' time hidden behind other GPU work. */
  communication_hidden_s?: number | null;
  /** Optional: of communication_s, collectives on the host (gloo) while the GPU ran nothing. */
  host_communication_s?: number | null;
  /** Optional: the span the trace itself shows. */
  trace_span_s?: number | null;
  /** Optional: how span_s was measured: trace, trace_step, cuda_events_*, host_clock_*. */
  span_source?: string | null;
  /** Optional: a loaded trace's profiler steps (count, median step, spread). */
  steps?: { [key: string]: unknown } | null;
  /** Optional: modelled FLOPs of one run. */
  flops?: number | null;
  /** Optional: modelled bytes of one run. */
  bytes?: number | null;
  /** Optional: kernels recorded. */
  kernel_count?: number | null;
  /** Optional: memory copies recorded. */
  copy_count?: number | null;
  /** Optional: kernels shorter than 10 us. */
  short_kernel_count?: number | null;
  /** Optional: kernel and CUDA-graph launches on the host. */
  launch_count?: number | null;
  /** Optional: false for a trace recorded without input shapes. */
  shapes_recorded?: boolean | null;
  /** Optional: GPU time of kernels without a cost model. */
  unmodelled_s?: number | null;
  /** Optional: share of the GPU time costed by an estimate (0..1). */
  estimated_share?: number | null;
  /** Optional: the ops whose GPU time has no cost model, with their share. */
  unmodelled_ops?: { name: string; share: number }[] | null;
  /** Optional: the collectives, their bandwidth and the link (null without any). */
  communication?: { [key: string]: unknown } | null;
  /** Optional: the math-mode settings that decided the fp32 roofs. */
  math_mode?: { [key: string]: unknown } | null;
  /** Optional: the profiled run's wall time on the host clock. */
  wall_s?: number | null;
  /** Optional: the profiled run's span. */
  profiled_span_s?: number | null;
  /** Optional: each timed run's span. */
  run_spans_s?: number[] | null;
  /** Optional: the torch version that ran the code. */
  torch_version?: string | null;
  /** Optional extras written by newer Python code. */
  [extra: string]: unknown;
}

/** An op a recommendation rests on. */
export interface IAdviceOp {
  /** Op name, e.g. aten::mm (or the op that synchronised, e.g. aten::item). */
  name: string;
  /** Input shapes as text ("" where not an op row). */
  shapes: string;
  /** Its nn.Module path pattern, "" where unknown. */
  module: string;
  /** The user's line that made it (--stack), "" where unknown. */
  line: string;
  /** Calls. */
  calls: number | null;
  /** Its self GPU time. */
  time_s: number | null;
}

/** One recommendation: what to try first, and why. */
export interface IRecommendation {
  /** The bottleneck it addresses: overhead, memory, compute, communication or other. */
  bottleneck: string;
  /** One-line headline. */
  title: string;
  /** Plain-language explanation: the evidence, the fix and the saving at best. */
  detail: string;
  /** The saving's share of the time (0..1), when known (older reports: the part's share). */
  share: number | null;
  /** One of CAUSES ("" in reports written before the advice module). */
  cause: string;
  /** The numbers it rests on, in words. */
  evidence: string;
  /** What to do. */
  fix: string;
  /** The ops it is about. */
  ops: IAdviceOp[];
  /** The time it can save at best, in seconds. */
  saving_s: number | null;
  /** The speed-up at best: 1 / (1 - share). */
  speedup: number | null;
  /** Whether it is an inference ("probably") rather than a measurement. */
  probably: boolean;
  /** The additive bound it had before the replay (absent from older reports). */
  saving_bound_s?: number | null;
  /** How the saving was made: "predicted by replaying the step's dependencies", or why not. */
  predicted_by?: string;
  /** The change replayed, in words. */
  changes?: string;
  /** What the replay could not model. */
  not_modelled?: string[];
  /** The cause whose fix must come first (a CUDA graph needs the syncs gone), or null. */
  requires?: string | null;
  /** What it saves, as said, and how that was made (absent from older reports: the detail's last sentence says it). */
  saving?: ISaving | null;
  /** The code change its fix needs, as a snippet (null: none, or a fix the A/B applies). */
  code_change?: ICodeChange | null;
  /** Its fix tried (Try this fix, %%brrr --try-fixes), with the verdict; null: not tried. */
  try?: ITryVerdict | null;
  /** Why the step's replay rules it out: it cannot pay here (in IReport.ruled_out only). */
  ruled_out?: string;
}

/**
 * A replayed saving below this share of the step cannot pay: its recommendation is ruled out,
 * not numbered (jupyter_brrr/schema/report.py's CANNOT_PAY_SHARE).
 */
export const CANNOT_PAY_SHARE = 0.02;

/** What a recommendation saves, as its writer said it. */
export interface ISaving {
  /** The sentence: "Predicted by replaying ..." or "At best ...". */
  text: string;
  /** The saving, in seconds. */
  seconds: number | null;
  /** Its likely range (analysis.spread.prediction_band; null in older reports). */
  low_s: number | null;
  /** The upper end of that range. */
  high_s: number | null;
  /** How it was made: "replay" (the step's dependency replay) or "additive bound". */
  predicted_by: string | null;
  /** What the prediction could not take into account. */
  not_modelled: string[];
}

/** A fix that needs a code change: the code before and after. */
export interface ICodeChange {
  /** The code as it is: the cell's own line where --stack recorded it, else a pattern. */
  before: string;
  /** The code changed. */
  after: string;
  /** Where the line is (cell:3), null where not recorded. */
  line: string | null;
}

/** The verdict of a recommendation's fix, tried against eager (actions/fixes.py). */
export interface ITryVerdict {
  /** confirmed, smaller than predicted, refuted or not applicable. */
  verdict: string;
  /** The A/B variant that applied the fix (tf32, bf16, channels_last, graph, compile), null: none. */
  fix: string | null;
  /** Why, in words, with the numbers. */
  reason: string;
  /** The saving predicted by the replay, in seconds. */
  predicted_s: number | null;
  /** Its likely range (analysis.spread.prediction_band; null in older reports). */
  predicted_low_s: number | null;
  /** The upper end of that range. */
  predicted_high_s: number | null;
  /** The saving measured (eager's median less the fix's), in seconds. */
  measured_s: number | null;
  /** The measured saving's range, from the speed-up's. */
  measured_low_s: number | null;
  /** The upper end of that range. */
  measured_high_s: number | null;
  /** Eager's median. */
  base_s: number | null;
  /** The fix's median. */
  fixed_s: number | null;
  /** Whether the fix's outputs matched eager's within its precision. */
  correct: boolean | null;
  /** Runs of the A/B in all. */
  runs: number | null;
}

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

/** The span split of one A/B variant. */
export interface IABSplit {
  /** Compute-bound kernel time. */
  compute_s: number | null;
  /** Memory-bound kernel time. */
  memory_s: number | null;
  /** Exposed communication time (0 in older reports). */
  communication_s: number | null;
  /** Other kernel time. */
  other_s: number | null;
  /** Idle time. */
  idle_s: number | null;
  /** Whole span. */
  span_s: number | null;
}

/** One variant of an A/B comparison (eager, compiled, CUDA graph, ...). */
export interface IABVariant {
  /** Variant name. */
  name: string;
  /** Median time of one run. */
  median_s: number | null;
  /** Interquartile range of the run times. */
  iqr_s: number | null;
  /** Speed-up against the baseline (median ratio). */
  speedup: number | null;
  /** Low end of the speed-up's range. */
  speedup_low: number | null;
  /** High end of the speed-up's range. */
  speedup_high: number | null;
  /** Plain verdict: "baseline", "faster", "slower", "noise", "fallback", "failed" or "mismatch". */
  verdict: string | null;
  /** Why torch.compile ran eager's code as a whole (verdict "fallback"). */
  fallback_reason: string | null;
  /** True when outputs matched the baseline, false on a mismatch, null if unchecked. */
  correct: boolean | null;
  /** Largest absolute difference from the baseline's outputs. */
  max_abs_err: number | null;
  /** Largest relative difference from the baseline's outputs. */
  max_rel_err: number | null;
  /** Compile time, kept apart from run time. */
  compile_s: number | null;
  /** Span split of one run of this variant. */
  split: IABSplit | null;
  /** Kernel launches per run. */
  kernel_count: number | null;
  /** Error text when the variant failed. */
  error: string | null;
}

/** An A/B comparison of variants of the same cell. */
export interface IAB {
  /** The variants, baseline first. */
  variants: IABVariant[];
  /** Plain-language caveats. */
  notes: string[];
  /** Extra fields written by newer Python code. */
  [extra: string]: unknown;
}

/** Columns of a sweep's points table (SWEEP_POINT_COLUMNS in jupyter_brrr/schema.py). */
export const SWEEP_POINT_COLUMNS = [
  'size',
  'status',
  'span_s',
  'q1_s',
  'q3_s',
  'busy_s',
  'compute_s',
  'memory_s',
  'communication_s',
  'other_s',
  'idle_s',
  'flops_per_s',
  'bytes_per_s',
  'peak_memory_bytes',
  'memory_increase_bytes',
  'items',
  'items_per_s',
  'runs',
  'launches',
  'error'
] as const;

/** Columns of a sweep's doublings table. */
export const SWEEP_DOUBLING_COLUMNS = [
  'from_size',
  'to_size',
  'time_ratio',
  'per_doubling',
  'verdict',
  'why'
] as const;

/** Columns of a sweep's capacity table: the largest size per GPU. */
export const SWEEP_CAPACITY_COLUMNS = [
  'device',
  'capacity_bytes',
  'largest_size',
  'this_gpu'
] as const;

/** The verdicts of a doubling. */
export const SWEEP_VERDICTS = [
  'overhead',
  'fixed',
  'transition',
  'compute',
  'memory',
  'saturated',
  'superlinear'
] as const;

/** The memory categories, in stacking order (MEMORY_CATEGORIES in jupyter_brrr/schema.py). */
export const MEMORY_CATEGORIES = [
  'parameters',
  'gradients',
  'optimizer_state',
  'activations',
  'temporaries',
  'inputs',
  'autograd_detail',
  'unknown',
  'held_before'
] as const;

/** Columns of the largest allocations live at the memory peak. */
export const MEMORY_LARGEST_COLUMNS = [
  'bytes',
  'category',
  'op',
  'line',
  'time_s'
] as const;

/** The fit of peak memory against size. */
export interface ISweepFit {
  /** "linear" or "quadratic". */
  kind: string;
  /** Bytes per unit of size. */
  per_item_bytes: number | null;
  /** Bytes at size 0. */
  fixed_bytes: number | null;
  /** Largest relative miss of the fit at a measured size. */
  max_miss: number | null;
  /** What this process's allocator may reach. */
  capacity_bytes: number | null;
  /** The largest size that fits this GPU, by the fit. */
  predicted_largest: number | null;
}

/** A size sweep (actions/sweep.py, SweepResult.to_dict()). */
export interface ISweep {
  /** Always "jupyter_brrr.sweep". */
  schema: string;
  /** Its own version. */
  version: number;
  /** The swept variable, e.g. "batch". */
  variable: string;
  /** The device it ran on. */
  device: string;
  /** Whether it ran on a GPU. */
  gpu: boolean;
  /** Why it ended: done, oom, budget, cancelled or error. */
  stopped: string;
  /** The size that ran out of memory, if one did. */
  oom_at: number | null;
  /** The smallest size within 90% of the best throughput. */
  knee: number | null;
  /** The size of the best throughput. */
  best: number | null;
  /** Peak memory against size, on a GPU. */
  fit: ISweepFit | null;
  /** The predicted largest size, run once after an OOM. */
  confirmation: { [key: string]: unknown } | null;
  /** Seconds the sweep took. */
  elapsed_s: number | null;
  /** Runs of the code in all. */
  runs_total: number | null;
  /** One row per size (SWEEP_POINT_COLUMNS). */
  points: ITable;
  /** One row per step between sizes (SWEEP_DOUBLING_COLUMNS). */
  doublings: ITable;
  /** The largest size per GPU (SWEEP_CAPACITY_COLUMNS). */
  capacity: ITable;
  /** The chart's flat and slope-1 guides, [[size, seconds], [size, seconds]] each. */
  guides: { [name: string]: number[][] };
  /** Plain-language findings and caveats. */
  notes: string[];
}

/** What held the peak memory (memory.py, MemoryBreakdown.to_dict()). */
export interface IMemory {
  /** Always "jupyter_brrr.memory". */
  schema: string;
  /** Its own version. */
  version: number;
  /** The device. */
  device: string;
  /** Whether it ran on a GPU. */
  gpu: boolean;
  /** The peak, bytes. */
  peak_bytes: number | null;
  /** When the peak was, seconds from the run's start. */
  peak_time_s: number | null;
  /** torch.cuda.max_memory_allocated over the run, on a GPU. */
  allocator_peak_bytes: number | null;
  /** Allocated when the run started, on a GPU. */
  before_bytes: number | null;
  /** What this process may allocate on the GPU. */
  capacity_bytes: number | null;
  /** Bytes per category at the peak (MEMORY_CATEGORIES). */
  at_peak: { [category: string]: number };
  /** What the allocator counted at the peak and no category explains. */
  unattributed_bytes: number | null;
  /** The timeline by category, and the allocator's total. */
  timeline: IMemoryTimeline;
  /** The largest allocations live at the peak (MEMORY_LARGEST_COLUMNS). */
  largest: ITable;
  /** Capacity advice, apart from speed. */
  advice: string[];
  /** Caveats. */
  notes: string[];
}

/** A memory timeline: one series per category over the same moments. */
export interface IMemoryTimeline {
  /** Moments, seconds from the run's start. */
  times_s: number[];
  /** The categories, in stacking order. */
  categories: string[];
  /** Bytes, one array per category. */
  bytes: number[][];
  /** The allocator's total at each moment. */
  allocated: number[];
}

/** A compute ceiling of the roofline: one peak, with the dtypes that share it. */
export interface ICeiling {
  /** The peak, FLOP/s. */
  flops_per_s: number;
  /** The dtypes (roofs) with this peak, e.g. ["bf16", "fp16"]. */
  dtypes: string[];
  /** Where the bandwidth slope meets it, FLOP/byte; null without a bandwidth. */
  ridge: number | null;
  /** Its line, from the ridge (or the left edge) to the right edge. */
  x: [number, number];
  /** Legend text, e.g. "bf16, fp16 990 TFLOP/s (ridge 206 FLOP/B)". */
  label: string;
  /** Whether an op was held against it (drawn strong). */
  used: boolean;
}

/** The roofline's geometry, computed once in Python (jupyter_brrr/display.py). */
export interface IRooflineSpec {
  /** The intensity axis, FLOP/byte (log). */
  x_range: [number, number];
  /** The FLOP/s axis (log). */
  y_range: [number, number];
  /** The bandwidth slope up to the highest ridge; null without a bandwidth or a peak. */
  bandwidth: {
    bytes_per_s: number;
    x: [number, number];
    y: [number, number];
    label: string;
  } | null;
  /** Compute ceilings, highest first. */
  ceilings: ICeiling[];
}

/** What the renderers draw, computed once in Python (schema version 2 on). */
export interface IDisplay {
  /** The dtype (roof) of most of the modelled GPU FLOPs, whose peak the overview quotes. */
  main_dtype: string | null;
  /** The roofline; null for a report without GPU ops to place. */
  roofline: IRooflineSpec | null;
}

/** A whole report document. */
export interface IReport {
  /** Always SCHEMA_NAME. */
  schema: string;
  /** Schema version the writer used. */
  version: number;
  /** What was profiled, e.g. "cell [3]". */
  name: string;
  /** How the data was captured: "magic", "profile" or "trace". */
  source: string;
  /** ISO timestamp of creation. */
  created: string;
  /** Cell-level figures. */
  summary: ISummary;
  /** Plain-language caveats. */
  notes: string[];
  /** What to try first. */
  recommendations: IRecommendation[];
  /** What was considered and cannot pay here, each with ruled_out (why). */
  ruled_out: IRecommendation[];
  /** Ops table (columns: OPS_COLUMNS in jupyter_brrr/schema.py). */
  ops: ITable;
  /** Kernels table (columns: KERNEL_COLUMNS in jupyter_brrr/schema.py). */
  kernels: IKernelTable;
  /** CPU ops table (columns: CPU_OP_COLUMNS in jupyter_brrr/schema.py). */
  cpu_ops: ITable;
  /** Profiler steps of a loaded trace (columns: STEP_COLUMNS in jupyter_brrr/schema.py);
   * empty unless the trace marks several, and in reports written before steps existed. */
  steps: ITable;
  /** The module tree (columns: MODULE_COLUMNS); empty where no op ran in a module, and in
   * reports written before modules were attributed. */
  modules: ITable;
  /** A/B comparison, when one ran. */
  ab: IAB | null;
  /** What the renderers draw (null in reports of schema version 1). */
  display: IDisplay | null;
  /** A named run: the change since the previous run of its name. */
  change?: IComparison | null;
  /** A named run: the runs of its name, oldest first. */
  history?: IHistoryRun[] | null;
  /** The plan for a target (`--target`), when one was given. */
  target?: ITarget | null;
  /** A size sweep of the same code, when one ran. */
  sweep?: ISweep | null;
  /** What held the peak memory, when asked for. */
  memory?: IMemory | null;
  /** The step's dependency graph, for `Report.predict` in Python (step_graph.py); the views
   * do not read it. Absent from older reports, null over step_graph.GRAPH_LIMIT nodes. */
  graph?: Record<string, unknown> | null;
  /** The What-if tab's spans replayed on the step's graph (analysis/whatif.py); null (or
   * absent, in older reports) where there is none: the tab shows Amdahl's law, so labelled. */
  what_if?: IWhatIf | null;
}

/** One thing the What-if can make faster, with its replayed curve. */
export interface IWhatIfTarget {
  /** The tab's id: part:compute, knob:launch, op:0 ... */
  id: string;
  /** part (of the split), knob (the whole step's), op. */
  kind: string;
  /** The part, the knob, or the op's name and shapes. */
  key: string;
  /** What it is, in words. */
  label: string;
  /** The op's name and shapes (an op only). */
  name: string | null;
  shapes: string | null;
  /** Its time and share of the span, where it has one. */
  time_s: number | null;
  share: number | null;
  /** False: removed or not (the synchronisations); the factor does not apply. */
  scalable: boolean;
  /** The change replayed, in words. */
  change: string;
  /** The factors replayed, from 1, and the span's ratio to the unchanged replay at each:
   * the tab interpolates linearly in 1/N between them. */
  factors: number[];
  ratios: number[];
  /** The speed-up in the limit (N unbounded; removed, for one not scalable). */
  limit: number;
}

/** The What-if's replayed curves. */
export interface IWhatIf {
  /** "predicted by replaying the step's dependencies (...)". */
  predicted_by: string;
  /** What the replay could not model. */
  not_modelled: string[];
  /** The largest factor replayed (the slider's end). */
  max_factor: number;
  targets: IWhatIfTarget[];
}

/** The value of a comparison document's `schema` field. */
export const COMPARISON_SCHEMA_NAME = 'jupyter_brrr.comparison';

/** The comparison schema version this extension reads. */
export const COMPARISON_SCHEMA_VERSION = 1;

/** The MIME type of a comparison (jupyter_brrr.diff, %brrr diff) in an output bundle. */
export const COMPARISON_MIME_TYPE =
  'application/vnd.jupyter-brrr.comparison+json';

/** The span change of a comparison, with its noise verdict. */
export interface ISpanChange {
  /** Span per run before. */
  before_s: number | null;
  /** Span per run after. */
  after_s: number | null;
  /** before_s / after_s. */
  speedup: number | null;
  /** Low end of the speed-up's range from both sides' timed runs. */
  low: number | null;
  /** High end of that range. */
  high: number | null;
  /** "faster", "slower", "noise" or "uncertain" (no spread to judge by). */
  verdict: string;
  /** Why that verdict, in words. */
  reason: string;
  /** Timed runs (or steady steps) of the before side. */
  runs_before: number | null;
  /** Timed runs (or steady steps) of the after side. */
  runs_after: number | null;
  /** The relative change under which a change is noise (0.05). */
  drift: number | null;
  /** after_s / before_s - 1: -0.3 is 30% less time. */
  change: number | null;
  /** The host CPU's speed while the before side was timed (a fixed Python loop, seconds). */
  host_before_s: number | null;
  /** The same for the after side. */
  host_after_s: number | null;
  /** What made a change beyond the ranges noise: "host", "same code", or "". */
  explained_by: string;
}

/** One side of a comparison. */
export interface IComparisonSide {
  /** "before", "after", or "run 3". */
  label: string;
  /** The report's name. */
  name: string;
  /** ISO timestamp of the report. */
  created: string | null;
  /** How the report was made: "magic", "profile" or "trace". */
  source: string;
  /** Device name. */
  device: string;
  /** Profiled runs (trace steps) its figures were divided by. */
  per_run: number | null;
  /** Its run number in a named history. */
  run: number | null;
}

/** Two measurements of the same code side by side (jupyter_brrr/comparison.py). */
export interface IComparison {
  /** Always COMPARISON_SCHEMA_NAME. */
  schema: string;
  /** The comparison's own schema version. */
  version: number;
  /** ISO timestamp of the comparison. */
  created: string;
  /** False when either side ran no GPU work (times are the CPU's). */
  gpu: boolean;
  /** The earlier measurement. */
  before: IComparisonSide;
  /** The later measurement. */
  after: IComparisonSide;
  /** The span change and its verdict. */
  span: ISpanChange;
  /** The split per run side by side: rows IChangeSplitRow. */
  split: ITable;
  /** Ops matched by name, shapes and dtypes: rows IChangeOpRow; `total` before the cut. */
  ops: ITable & { total?: number };
  /** The ops summed over shapes, one row per op name. */
  by_name: ITable;
  /** The ops summed per category: rows IChangeCategoryRow (empty in older comparisons). */
  by_category: ITable;
  /** Kernels per name, before and after; `total` before the cut. */
  kernels: ITable & { total?: number };
  /** Kernels, launches and copies per run: rows IChangeCountRow. */
  counts: ITable;
  /** The what-if of the earlier report read at each part's measured speed-up: IAmdahlRow. */
  amdahl: ITable;
  /** The bottleneck shift in words. */
  shift: string[];
  /** What differs besides the change. */
  warnings: string[];
  /** Plain-language caveats. */
  notes: string[];
}

/** A row of a comparison's split table. */
export interface IChangeSplitRow {
  /** compute, memory, communication, other, idle, or span. */
  part: string;
  /** Time per run before. */
  before_s: number | null;
  /** Time per run after. */
  after_s: number | null;
  /** after_s - before_s. */
  delta_s: number | null;
  /** Its share of the span before. */
  before_share: number | null;
  /** Its share of the span after. */
  after_share: number | null;
  /** "faster", "slower" or "noise" ("" in older comparisons); the span row: the span's. */
  verdict: string;
}

/** A row of a comparison's op table. */
export interface IChangeOpRow {
  /** Op name. */
  name: string;
  /** Input shapes as text. */
  shapes: string;
  /** Input dtypes as text. */
  dtypes: string;
  /** Op category (matmul, attention, ...). */
  category: string;
  /** Calls per run before. */
  calls_before: number | null;
  /** Calls per run after. */
  calls_after: number | null;
  /** Its time per run before. */
  time_before_s: number | null;
  /** Its time per run after. */
  time_after_s: number | null;
  /** Its share before. */
  share_before: number | null;
  /** Its share after. */
  share_after: number | null;
  /** time_after_s - time_before_s. */
  delta_s: number | null;
  /** "both", "appeared" or "vanished". */
  status: string;
  /** "faster", "slower" or "noise" ("" in older comparisons). */
  verdict: string;
}

/** A row of a comparison's per-category table. */
export interface IChangeCategoryRow {
  /** Op category ("" where the ops have none). */
  category: string;
  /** Op rows in it. */
  ops: number | null;
  /** Calls per run before. */
  calls_before: number | null;
  /** Calls per run after. */
  calls_after: number | null;
  /** Time per run before. */
  time_before_s: number | null;
  /** Time per run after. */
  time_after_s: number | null;
  /** Share before. */
  share_before: number | null;
  /** Share after. */
  share_after: number | null;
  /** time_after_s - time_before_s. */
  delta_s: number | null;
  /** "faster", "slower" or "noise". */
  verdict: string;
}

/** A row of a comparison's counts table. */
export interface IChangeCountRow {
  /** kernels, launches or copies. */
  what: string;
  /** Per run before. */
  before: number | null;
  /** Per run after. */
  after: number | null;
}

/** A row of the Amdahl check: the earlier what-if against the measurement. */
export interface IAmdahlRow {
  /** "part" (of the split) or "op". */
  kind: string;
  /** The part or op name. */
  part: string;
  /** Its share of the span before. */
  share_before: number | null;
  /** Its time before. */
  time_before_s: number | null;
  /** Its time after. */
  time_after_s: number | null;
  /** Its own speed-up (null: it took no time after). */
  part_speedup: number | null;
  /** The overall speed-up the what-if predicted from them. */
  predicted_speedup: number | null;
  /** Its likely range, from both captures' own noise (null in older comparisons). */
  predicted_low: number | null;
  /** The upper end of that range. */
  predicted_high: number | null;
  /** The span that predicts. */
  predicted_span_s: number | null;
  /** The overall speed-up measured. */
  measured_speedup: number | null;
  /** The most that speeding it up could give. */
  limit: number | null;
  /** "replay" (on the before step's dependencies) or "Amdahl" (absent from older ones). */
  predicted_by?: string | null;
  /** The replay row's: what it could not model. */
  not_modelled?: string | null;
}

/** One run of a named cell. */
export interface IHistoryRun {
  /** Its number within the name. */
  run: number;
  /** ISO timestamp. */
  created: string | null;
  /** Span per run. */
  span_s: number | null;
  /** Compute-bound time per run. */
  compute_s: number | null;
  /** Memory-bound time per run. */
  memory_s: number | null;
  /** Exposed communication per run. */
  communication_s: number | null;
  /** Other GPU time per run. */
  other_s: number | null;
  /** Idle time per run. */
  idle_s: number | null;
  /** Kernels per run. */
  kernel_count: number | null;
  /** Launches per run. */
  launch_count: number | null;
  /** Steady state (true) or a first run (false). */
  warm: boolean | null;
  /** Device name. */
  device: string | null;
  /** Verdict against the run before it (null for the first). */
  verdict: string | null;
  /** Speed-up against the run before it. */
  speedup: number | null;
  /** Whether its code differs from the run before's (null: unknown). */
  code_changed: boolean | null;
  /** How it was measured, in words ("" in older reports). */
  settings: string;
}

/** A way to close a target's gap: fix one part of the split or one op. */
export interface ITargetFix {
  /** "part" or "op". */
  kind: string;
  /** Its key: a part of the split, or an op name. */
  part: string;
  /** It in words. */
  label: string;
  /** Its time per run. */
  time_s: number | null;
  /** Its share of the span. */
  share: number | null;
  /** What would remain with it at zero. */
  remains_s: number | null;
  /** Whether fixing it alone can reach the goal. */
  closes: boolean;
  /** How much faster it must get (null: it cannot close the gap). */
  needed_factor: number | null;
  /** The overall speed-up at best with it at zero. */
  limit: number | null;
  /** The remainder by Amdahl's law, beside the replayed one (absent from older plans). */
  amdahl_remains_s?: number | null;
  /** "predicted by replaying the step's dependencies" where the report has a step graph. */
  predicted_by?: string;
}

/** The plan for a target (jupyter_brrr/target.py). */
export interface ITarget {
  /** The goal as the user wrote it and as a span per run. */
  goal: {
    /** As written, e.g. "30ms" or "2000/s". */
    text: string;
    /** "time" or "throughput". */
    kind: string;
    /** The goal's span per run. */
    span_s: number | null;
  };
  /** The span the plan starts from. */
  span_s: number | null;
  /** Items per second now (a throughput goal). */
  rate: number | null;
  /** True when the span already meets the goal. */
  met: boolean;
  /** Span minus the goal's span. */
  gap_s: number | null;
  /** span_s / the goal's span. */
  speedup_needed: number | null;
  /** The parts and ops that could close the gap, largest first. */
  fixes: ITargetFix[];
  /** Scaling out, as an estimate (replicas or a split across GPUs), or null. */
  scale: { [key: string]: unknown } | null;
  /** GPUs the state needs when its peak exceeds one GPU's memory, or null. */
  capacity: { [key: string]: unknown } | null;
  /** The plan in words. */
  lines: string[];
  /** Caveats. */
  notes: string[];
}

/** A row of the ops table as an object. */
export interface IOpRow {
  /** Op name, e.g. aten::addmm. */
  name: string;
  /** Input shapes as text. */
  shapes: string;
  /** Input dtypes as text. */
  dtypes: string;
  /** Category: matmul, conv, attention, elementwise, ... */
  category: string;
  /** nn.Module scope, when the trace has one. */
  module: string;
  /** Number of calls. */
  calls: number | null;
  /** Self GPU time. */
  gpu_time_s: number | null;
  /** GPU time including child ops. */
  total_gpu_time_s: number | null;
  /** Host time including children. */
  cpu_time_s: number | null;
  /** Host time excluding children. */
  self_cpu_time_s: number | null;
  /** Kernel launches. */
  kernels: number | null;
  /** FLOPs, null without a cost model. */
  flops: number | null;
  /** Minimum traffic in bytes. */
  bytes: number | null;
  /** flops / bytes. */
  intensity: number | null;
  /** Achieved FLOP/s. */
  flops_per_s: number | null;
  /** Achieved bytes/s. */
  bytes_per_s: number | null;
  /** Achieved / attainable. */
  roof_fraction: number | null;
  /** One of BOUNDS in jupyter_brrr/schema.py. */
  bound: string;
  /** Compute dtype. */
  dtype: string;
  /** The peak it is held against: its dtype's, or tf32 for float32 on TF32 tensor cores. */
  roof: string;
  /** How the roof was chosen: dtype, kernel, setting or assumed ("" without figures). */
  roof_basis: string;
  /** "" or why roof_fraction is above 105%: a model or peak mismatch, never an achievement. */
  roof_flag: string;
  /** How flops and bytes were made: formula, shapes, estimate; empty without a model. */
  cost_model: string;
  /** compute or memory: its intensity against its roof's ridge ("" without figures). */
  regime: string;
  /** "" or one of REASONS: why it is far under its roof. */
  reason: string;
  /** The evidence for the reason, with its numbers. */
  why: string;
  /** The user's line that made the calls (--stack), "" otherwise. */
  line: string;
}

/** Why an op is far under its roof (jupyter_brrr/limits.py). */
export const REASONS = [
  'fp32 without tensor cores',
  'layout',
  'tile quantisation',
  'too little work',
  'wave quantisation',
  'strided',
  'host copy',
  'below roof'
] as const;

/** What a recommendation is about (jupyter_brrr/advice.py). */
export const CAUSES = [
  'tile quantisation',
  'wave quantisation',
  'too little work',
  'fp32 without tensor cores',
  'bf16',
  'strided',
  'layout',
  'fusion',
  'unfused attention',
  'memory-bound gather',
  'launch overhead',
  'synchronisation',
  'host stall',
  'host copy',
  'communication'
] as const;

/** Columns of the module tree: one row per nn.Module path and each path above it. */
export const MODULE_COLUMNS = [
  'path',
  'parent',
  'depth',
  'calls',
  'kernels',
  'self_gpu_time_s',
  'gpu_time_s',
  'self_cpu_time_s',
  'cpu_time_s'
] as const;

/** A row of the module tree. */
export interface IModuleRow {
  /** Its path, e.g. model.transformer.h.3.mlp.c_fc; "" for the ops outside any module. */
  path: string;
  /** The path above it ("" at the top). */
  parent: string;
  /** 0 for a root (a variable), -1 for the ops outside any module. */
  depth: number;
  /** Op calls in it and below. */
  calls: number | null;
  /** GPU events those calls own. */
  kernels: number | null;
  /** GPU time of the ops made directly in it. */
  self_gpu_time_s: number | null;
  /** GPU time in it and below. */
  gpu_time_s: number | null;
  /** Host self time of the ops made directly in it. */
  self_cpu_time_s: number | null;
  /** Host self time in it and below. */
  cpu_time_s: number | null;
}

/** A row of the steps table of a loaded trace. */
export interface IStepRow {
  /** Step name, e.g. ProfilerStep#103. */
  step: string;
  /** first, steady or partial. */
  kind: string;
  /** Start of its window, from the first step's. */
  start_s: number | null;
  /** Its window on the GPU timeline. */
  span_s: number | null;
  /** Time its GPU events ran. */
  busy_s: number | null;
  /** Of busy_s: compute-bound. */
  compute_s: number | null;
  /** Of busy_s: memory-bound. */
  memory_s: number | null;
  /** Exposed communication (0 in older reports). */
  communication_s: number | null;
  /** Of busy_s: other. */
  other_s: number | null;
  /** span_s - busy_s. */
  idle_s: number | null;
  /** GPU events it launched. */
  kernels: number | null;
}

/** A row of the kernels table as an object. */
export interface IKernelRow {
  /** Kernel name. */
  name: string;
  /** The op that launched it. */
  op: string;
  /** Category. */
  category: string;
  /** Stream id. */
  stream: string;
  /** Start time from the start of the span. */
  start_s: number | null;
  /** Duration (total of `count` launches when aggregated). */
  dur_s: number | null;
  /** Launch count, 1 unless aggregated. */
  count: number | null;
  /** FLOPs. */
  flops: number | null;
  /** Bytes moved. */
  bytes: number | null;
  /** One of BOUNDS in jupyter_brrr/schema.py. */
  bound: string;
  /** The nn.Module path of the op that owns it ("" where unknown). */
  module: string;
}

/** A row of the CPU ops table as an object. */
export interface ICpuOpRow {
  /** Op name. */
  name: string;
  /** Thread id. */
  tid: string;
  /** Start time from the start of the span. */
  start_s: number | null;
  /** Duration. */
  dur_s: number | null;
}

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
    ...(typeof value.ruled_out === 'string' && value.ruled_out
      ? { ruled_out: value.ruled_out }
      : {})
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

/** The value of a history document's `schema` field. */
export const HISTORY_SCHEMA_NAME = 'jupyter_brrr.history';

/** The history schema version this extension reads. */
export const HISTORY_SCHEMA_VERSION = 1;

/** The MIME type of a named cell's runs (%brrr history NAME) in an output bundle. */
export const HISTORY_MIME_TYPE = 'application/vnd.jupyter-brrr.history+json';

/** A named cell's runs on their own (jupyter_brrr/history_store.py, History.to_dict). */
export interface IHistoryDocument {
  /** Always HISTORY_SCHEMA_NAME. */
  schema: string;
  /** The history's own schema version. */
  version: number;
  /** The name the runs were kept under (%%brrr --name NAME). */
  name: string;
  /** Its runs, oldest first (the same rows as a report's `history`). */
  runs: IHistoryRun[];
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
 * The job report: the ranks of one torch.distributed run (`jupyter_brrr/job.py`, the
 * `JOB_*` constants of `jupyter_brrr/schema.py`). A document of its own, under its own MIME
 * type; the Ranks view draws it. Tables in the same "split" orientation.
 */

/** The value of a job document's `schema` field. */
export const JOB_SCHEMA_NAME = 'jupyter_brrr.job';

/** The job schema version this extension reads. */
export const JOB_SCHEMA_VERSION = 1;

/** The MIME type of a job report in a notebook output bundle. */
export const JOB_MIME_TYPE = 'application/vnd.jupyter-brrr.job+json';

/** A rank's span, split by priority; communication is the exposed part. */
export const JOB_SPLIT_PARTS = [
  'compute',
  'memory',
  'other',
  'communication',
  'idle'
] as const;

/** Columns of the ranks table: one row per rank. */
export const JOB_RANK_COLUMNS = [
  'rank',
  'file',
  'host',
  'device',
  'backend',
  'span_s',
  'compute_s',
  'memory_s',
  'other_s',
  'communication_s',
  'idle_s',
  'work_s',
  'comm_s',
  'hidden_comm_s',
  'overlap',
  'calls',
  'last_count',
  'lateness_s',
  'wait_s',
  'clock_offset_s'
] as const;

/** Columns of the collectives table: one row per group, op, size and dtype. */
export const JOB_COLLECTIVE_COLUMNS = [
  'group',
  'group_size',
  'op',
  'bytes',
  'dtype',
  'where',
  'calls',
  'time_s',
  'median_s',
  'algbw',
  'busbw',
  'link_peak',
  'link_fraction',
  'algorithm',
  'ranks'
] as const;

/** Columns of the steps table: one row per rank and profiler step. */
export const JOB_STEP_COLUMNS = [
  'rank',
  'step',
  'kind',
  'start_s',
  'span_s',
  'compute_s',
  'memory_s',
  'other_s',
  'comm_s',
  'exposed_comm_s',
  'last_count',
  'lateness_s',
  'wait_s'
] as const;

/** Columns of the calls table: every collective call of every rank, aligned clock. */
export const JOB_CALL_COLUMNS = [
  'rank',
  'instance',
  'group',
  'op',
  'bytes',
  'dtype',
  'where',
  'step',
  'enqueue_s',
  'arrival_s',
  'start_s',
  'end_s'
] as const;

/** Columns of the lanes table: each rank's activity per part (for a timeline). */
export const JOB_LANE_COLUMNS = ['rank', 'part', 'start_s', 'end_s'] as const;

/** Who holds the others back, and the figures that say so. */
export interface IJobStraggler {
  /** The straggler's rank; null where none is consistent. */
  rank: number | null;
  /** Collectives whose last arrival stood out of the clocks' noise. */
  decided: number;
  /** Collectives seen on two ranks or more. */
  collectives: number;
  /** The clocks' noise: median spread of a collective's end across ranks. */
  noise_s: number | null;
  /** Collectives the straggler arrived last at. */
  last_count?: number;
  /** last_count / decided. */
  share?: number;
  /** How long it held the others back, in all. */
  lateness_s?: number;
  /** How long the other ranks waited (median), in all. */
  others_wait_s?: number;
  /** Profiler steps it was seen in. */
  steps?: number;
  /** lateness_s per step. */
  lateness_per_step_s?: number | null;
  /** others_wait_s per step. */
  others_wait_per_step_s?: number | null;
  /** Where no rank is consistent: last arrivals per rank. */
  varies?: { [rank: string]: number };
}

/** Job-level figures. */
export interface IJobSummary {
  /** The ranks loaded. */
  ranks: number[];
  /** The job's world size. */
  world_size: number;
  /** The process group backend(s), e.g. "nccl". */
  backend: string;
  /** The ranks' devices. */
  devices: string[];
  /** True where any rank ran GPU work. */
  gpu: boolean;
  /** Host names the traces give. */
  hosts: string[];
  /** True when the ranks share one clock (one host). */
  one_clock: boolean;
  /** Profiler step numbers seen. */
  steps: number[];
  /** The longest rank span. */
  span_s: number;
  /** Communication per rank (mean). */
  comm_s: number;
  /** Exposed communication per rank (mean). */
  exposed_comm_s: number;
  /** Exposed communication over span (mean of the ranks). */
  exposed_share: number | null;
  /** Hidden over all communication. */
  overlap: number | null;
  /** The other ranks' work (median), against the busiest rank's. */
  work_median_s: number;
  /** The busiest rank's work. */
  work_max_s: number;
  /** The busiest rank. */
  busiest_rank: number | null;
  /** work_max_s / work_median_s. */
  imbalance: number | null;
  /** The straggler. */
  straggler: IJobStraggler;
  /** Where the link peak comes from ("" where none applies). */
  link_source: string;
  /** Collective calls per rank, all kinds. */
  collective_calls: number;
  /** Extras written by newer Python code. */
  [extra: string]: unknown;
}

/** One piece of job advice, with the figures it rests on. */
export interface IJobRecommendation {
  /** "overlap", "straggler", "imbalance" or "bandwidth". */
  kind: string;
  /** One-line headline. */
  title: string;
  /** Plain-language explanation with the numbers. */
  detail: string;
  /** Share of the span it concerns (0..1). */
  share: number | null;
}

/** A whole job document. */
export interface IJob {
  /** Always JOB_SCHEMA_NAME. */
  schema: string;
  /** Schema version the writer used. */
  version: number;
  /** The job's name (its folder or script). */
  name: string;
  /** ISO timestamp of creation. */
  created: string;
  /** Job-level figures. */
  summary: IJobSummary;
  /** Plain-language caveats. */
  notes: string[];
  /** What to try first. */
  recommendations: IJobRecommendation[];
  /** Columns: JOB_RANK_COLUMNS. */
  ranks: ITable;
  /** Columns: JOB_COLLECTIVE_COLUMNS. */
  collectives: ITable;
  /** Columns: JOB_STEP_COLUMNS. */
  steps: ITable;
  /** Columns: JOB_CALL_COLUMNS; the first calls where there are more than 20,000. */
  calls: ITable & {
    /** How many calls the job held in all. */
    total?: number;
  };
  /** Columns: JOB_LANE_COLUMNS. */
  lanes: ITable;
}

/** A row of the job's ranks table (JOB_RANK_COLUMNS). */
export interface IJobRankRow {
  /** The rank. */
  rank: number;
  /** Its trace file's name. */
  file: string;
  /** Its host ("" where the trace does not say). */
  host: string;
  /** Its device. */
  device: string;
  /** Its process group backend. */
  backend: string;
  /** First to last activity of the rank. */
  span_s: number | null;
  /** Compute-bound time. */
  compute_s: number | null;
  /** Memory-bound time. */
  memory_s: number | null;
  /** Other GPU time. */
  other_s: number | null;
  /** Exposed communication: communication with none of its own work beside it. */
  communication_s: number | null;
  /** Nothing ran. */
  idle_s: number | null;
  /** Its own work: compute + memory + other. */
  work_s: number | null;
  /** All communication, hidden or not. */
  comm_s: number | null;
  /** Communication that overlapped its own work. */
  hidden_comm_s: number | null;
  /** hidden_comm_s / comm_s. */
  overlap: number | null;
  /** Collective calls in its trace. */
  calls: number | null;
  /** Collectives it arrived last at, beyond the clocks' noise. */
  last_count: number | null;
  /** How long it held the others back, summed. */
  lateness_s: number | null;
  /** How long it waited for the last rank, summed. */
  wait_s: number | null;
  /** Taken off its times to align the ranks. */
  clock_offset_s: number | null;
}

/** A row of the job's collectives table (JOB_COLLECTIVE_COLUMNS). */
export interface IJobCollectiveRow {
  /** Process group name. */
  group: string;
  /** Ranks in the group. */
  group_size: number | null;
  /** all_reduce, all_gather, ... */
  op: string;
  /** Message size as nccl-tests counts it. */
  bytes: number | null;
  /** Element dtype. */
  dtype: string;
  /** "gpu" (NCCL kernels) or "host" (gloo). */
  where: string;
  /** Calls per rank. */
  calls: number | null;
  /** Summed transfer time (from the last arrival to the end). */
  time_s: number | null;
  /** Median transfer time of one call. */
  median_s: number | null;
  /** Algorithm bandwidth: bytes / median_s. */
  algbw: number | null;
  /** Bus bandwidth: algbw x nccl-tests' factor. */
  busbw: number | null;
  /** Per-direction interconnect bandwidth, where known. */
  link_peak: number | null;
  /** busbw / link_peak. */
  link_fraction: number | null;
  /** NCCL's algorithm and protocol, from the kernel name. */
  algorithm: string;
  /** Ranks each call was matched on (the fewest). */
  ranks: number | null;
}

/** A row of the job's steps table (JOB_STEP_COLUMNS): one profiler step of one rank. */
export interface IJobStepRow {
  /** The rank. */
  rank: number;
  /** Its ProfilerStep number. */
  step: number | null;
  /** first, steady or partial ("" without GPU work). */
  kind: string;
  /** Its window's start, on the job's aligned clock. */
  start_s: number | null;
  /** Its window. */
  span_s: number | null;
  /** Compute-bound time. */
  compute_s: number | null;
  /** Memory-bound time. */
  memory_s: number | null;
  /** Other GPU time. */
  other_s: number | null;
  /** All communication. */
  comm_s: number | null;
  /** Communication with none of the rank's own work beside it. */
  exposed_comm_s: number | null;
  /** Collectives it arrived last at. */
  last_count: number | null;
  /** How long it held the others back. */
  lateness_s: number | null;
  /** How long it waited for the last rank. */
  wait_s: number | null;
}

/** A row of the job's calls table (JOB_CALL_COLUMNS): one collective call of one rank. */
export interface IJobCallRow {
  /** The rank. */
  rank: number;
  /** "group/step/place": the same collective on every rank. */
  instance: string;
  /** Process group name. */
  group: string;
  /** all_reduce, ... */
  op: string;
  /** Message size. */
  bytes: number | null;
  /** Element dtype. */
  dtype: string;
  /** "gpu" or "host". */
  where: string;
  /** Profiler step. */
  step: number | null;
  /** When the rank enqueued it (aligned clock). */
  enqueue_s: number | null;
  /** When the rank arrived at it. */
  arrival_s: number | null;
  /** Start of its transfer. */
  start_s: number | null;
  /** Its end. */
  end_s: number | null;
}

/** A row of the job's lanes table (JOB_LANE_COLUMNS): one interval of a rank's activity. */
export interface IJobLaneRow {
  /** The rank. */
  rank: number;
  /** compute, memory, other, comm or exposed. */
  part: string;
  /** Start, aligned clock. */
  start_s: number;
  /** End, aligned clock. */
  end_s: number;
}

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
    noise_s: num(v.noise_s)
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
  out.lateness_per_step_s = num(v.lateness_per_step_s);
  out.others_wait_per_step_s = num(v.others_wait_per_step_s);
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
