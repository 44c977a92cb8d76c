/*
 * Generated from the Python schema (jupyter_brrr/schema/) by js/generate-schema-types.mjs:
 * do not edit by hand. Regenerate with `jlpm schema:types`.
 *
 * The documents as written (the raw JSON); js/src/schema.ts reads them into the types the
 * views use.
 */

export interface IRawDocuments {
  report?: IRawReport;
  comparison?: IRawComparison;
  job?: IRawJob;
  history?: IRawHistory;
  history_run?: IRawHistoryRunFile;
  plan?: IRawTargetPlan;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawReport".
 */
export interface IRawReport {
  schema: 'jupyter_brrr.report';
  version: number;
  summary: IRawSummary;
  ops: {
    columns: string[];
    data: unknown[][];
  };
  kernels: {
    columns: string[];
    data: unknown[][];
    aggregated?: boolean | null;
    total?: number | null;
  };
  name?: string | null;
  source?: string | null;
  created?: string | null;
  notes?: string[];
  recommendations?: IRawRecommendation[];
  ruled_out?: IRawRecommendation[];
  cpu_ops?: {
    columns: string[];
    data: unknown[][];
  } | null;
  steps?: {
    columns: string[];
    data: unknown[][];
  } | null;
  modules?: {
    columns: string[];
    data: unknown[][];
  } | null;
  ab?: IRawAB | null;
  change?: IRawComparison | null;
  history?: IRawHistoryRun[] | null;
  target?: IRawTargetPlan | null;
  sweep?: IRawSweep | null;
  memory?: IRawMemory | null;
  display?: IRawDisplay | null;
  graph?: {
    [k: string]: unknown;
  } | null;
  what_if?: IRawWhatIf | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSummary".
 */
export interface IRawSummary {
  span_s: number;
  busy_s: number;
  compute_s: number;
  memory_s: number;
  other_s: number;
  idle_s: number;
  device: string;
  runs: IRawRuns;
  communication_s?: number;
  communication_hidden_s?: number | null;
  host_communication_s?: number | null;
  modelled_share?: number | null;
  estimated_share?: number | null;
  peaks?: IRawPeaks | null;
  peak_memory_bytes?: number | null;
  memory_capacity_bytes?: number | null;
  gpu?: boolean | null;
  warm?: boolean | null;
  span_source?: string | null;
  trace_span_s?: number | null;
  flops?: number | null;
  bytes?: number | null;
  kernel_count?: number | null;
  copy_count?: number | null;
  short_kernel_count?: number | null;
  achieved_flops_per_s?: number | null;
  achieved_bytes_per_s?: number | null;
  unmodelled_s?: number | null;
  memory_before_bytes?: number | null;
  memory_increase_bytes?: number | null;
  memory_after_bytes?: number | null;
  timing?: IRawTiming | null;
  idle_gap_count?: number | null;
  launch_count?: number | null;
  overhead_kernels_s?: number | null;
  shapes_recorded?: boolean | null;
  torch_version?: string | null;
  unmodelled_ops?: {
    name?: string | null;
    share?: number | null;
  }[];
  math_mode?: {
    [k: string]: unknown;
  } | null;
  communication?: {
    [k: string]: unknown;
  } | null;
  steps?: {
    [k: string]: unknown;
  } | null;
  run_spans_s?: number[] | null;
  wall_s?: number | null;
  profiled_span_s?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawRuns".
 */
export interface IRawRuns {
  warmup?: number | null;
  timed?: number | null;
  profiled?: number | null;
  total?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawPeaks".
 */
export interface IRawPeaks {
  device?: string | null;
  source?: string | null;
  measured?: boolean | null;
  flops?: {
    [k: string]: number | null;
  };
  bandwidth?: number | null;
  memory_bytes?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawTiming".
 */
export interface IRawTiming {
  protocol?: string | null;
  clock?: string | null;
  warmup_ended?: string | null;
  sensors?: string | null;
  warmup_runs?: number | null;
  timed_runs?: number | null;
  warmup_s?: number | null;
  min_s?: number | null;
  q1_s?: number | null;
  median_s?: number | null;
  q3_s?: number | null;
  max_s?: number | null;
  host_loop_fastest_s?: number | null;
  spread?: number | null;
  host_slowdown?: number | null;
  warmup_sm_clock_mhz?: (number | null)[];
  sm_clock_mhz?: (number | null)[];
  power_w?: (number | null)[];
  host_loop_s?: (number | null)[];
  findings?: IRawTimingFinding[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawTimingFinding".
 */
export interface IRawTimingFinding {
  kind: string;
  text?: string | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawRecommendation".
 */
export interface IRawRecommendation {
  title: string;
  detail: string;
  bottleneck?: string | null;
  share?: number | null;
  cause?: string | null;
  evidence?: string | null;
  fix?: string | null;
  ops?: IRawAdviceOp[];
  saving_s?: number | null;
  speedup?: number | null;
  probably?: boolean | null;
  saving_bound_s?: number | null;
  predicted_by?: string | null;
  changes?: string | null;
  requires?: string | null;
  not_modelled?: string[];
  saving?: IRawSaving;
  code_change?: IRawCodeChange | null;
  try?: IRawTryVerdict | null;
  ruled_out?: string | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawAdviceOp".
 */
export interface IRawAdviceOp {
  name?: string | null;
  shapes?: string | null;
  module?: string | null;
  line?: string | null;
  calls?: number | null;
  time_s?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSaving".
 */
export interface IRawSaving {
  text: string;
  seconds?: number | null;
  low_s?: number | null;
  high_s?: number | null;
  predicted_by?: ('replay' | 'additive bound') | null;
  not_modelled?: string[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawCodeChange".
 */
export interface IRawCodeChange {
  before: string;
  after: string;
  line?: string | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawTryVerdict".
 */
export interface IRawTryVerdict {
  verdict:
    'confirmed' | 'smaller than predicted' | 'refuted' | 'not applicable';
  fix?: string | null;
  reason?: string | null;
  predicted_s?: number | null;
  predicted_low_s?: number | null;
  predicted_high_s?: number | null;
  measured_s?: number | null;
  measured_low_s?: number | null;
  measured_high_s?: number | null;
  base_s?: number | null;
  fixed_s?: number | null;
  correct?: boolean | null;
  runs?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawAB".
 */
export interface IRawAB {
  variants?: IRawABVariant[];
  notes?: string[];
  baseline?: string | null;
  fused_ops?: {
    [k: string]: string[];
  };
  runs_total?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawABVariant".
 */
export interface IRawABVariant {
  name: string;
  median_s?: number | null;
  iqr_s?: number | null;
  speedup?: number | null;
  speedup_low?: number | null;
  speedup_high?: number | null;
  compile_s?: number | null;
  max_abs_err?: number | null;
  max_rel_err?: number | null;
  runs?: number | null;
  kernel_count?: number | null;
  launches?: number | null;
  recompiles?: number | null;
  verdict?: string | null;
  correct?: boolean | null;
  split?: IRawABSplit | null;
  graph_breaks?: unknown[] | null;
  error?: string | null;
  error_line?: string | null;
  fallback_reason?: string | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawABSplit".
 */
export interface IRawABSplit {
  compute_s?: number | null;
  memory_s?: number | null;
  communication_s?: number | null;
  other_s?: number | null;
  idle_s?: number | null;
  span_s?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawComparison".
 */
export interface IRawComparison {
  schema: 'jupyter_brrr.comparison';
  version: number;
  before: IRawComparisonSide;
  after: IRawComparisonSide;
  span: IRawSpanChange;
  split: {
    columns: string[];
    data: unknown[][];
  };
  ops: {
    columns: string[];
    data: unknown[][];
    total?: number | null;
  };
  counts: {
    columns: string[];
    data: unknown[][];
  };
  created?: string | null;
  gpu?: boolean;
  by_name?: {
    columns: string[];
    data: unknown[][];
  } | null;
  by_category?: {
    columns: string[];
    data: unknown[][];
  } | null;
  kernels?: {
    columns: string[];
    data: unknown[][];
    total?: number | null;
  } | null;
  amdahl?: {
    columns: string[];
    data: unknown[][];
  } | null;
  shift?: string[];
  warnings?: string[];
  notes?: string[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawComparisonSide".
 */
export interface IRawComparisonSide {
  label: string;
  name: string;
  created: string | null;
  source: string;
  device: string;
  per_run: number;
  run?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSpanChange".
 */
export interface IRawSpanChange {
  before_s: number;
  after_s: number;
  speedup: number | null;
  low: number | null;
  high: number | null;
  verdict: 'faster' | 'slower' | 'noise' | 'uncertain';
  runs_before: number;
  runs_after: number;
  drift?: number;
  reason?: string;
  change?: number | null;
  host_before_s?: number | null;
  host_after_s?: number | null;
  explained_by?: string;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawHistoryRun".
 */
export interface IRawHistoryRun {
  run: number;
  created?: string | null;
  span_s?: number | null;
  compute_s?: number | null;
  memory_s?: number | null;
  communication_s?: number | null;
  other_s?: number | null;
  idle_s?: number | null;
  kernel_count?: number | null;
  launch_count?: number | null;
  warm?: boolean | null;
  device?: string | null;
  verdict?: ('faster' | 'slower' | 'noise' | 'uncertain') | null;
  speedup?: number | null;
  code_changed?: boolean | null;
  settings?: string | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawTargetPlan".
 */
export interface IRawTargetPlan {
  goal: IRawTargetGoal;
  span_s?: number | null;
  rate?: number | null;
  met?: boolean | null;
  gap_s?: number | null;
  speedup_needed?: number | null;
  fixes?: IRawTargetFix[];
  scale?: IRawTargetScale | null;
  capacity?: IRawTargetCapacity | null;
  lines?: string[];
  notes?: string[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawTargetGoal".
 */
export interface IRawTargetGoal {
  text: string;
  kind?: ('time' | 'throughput') | null;
  value?: number | null;
  items?: number | null;
  unit?: string | null;
  span_s?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawTargetFix".
 */
export interface IRawTargetFix {
  kind?: ('part' | 'op') | null;
  part?: string | null;
  label?: string | null;
  time_s?: number | null;
  share?: number | null;
  remains_s?: number | null;
  amdahl_remains_s?: number | null;
  predicted_by?: string | null;
  closes?: boolean | null;
  needed_factor?: number | null;
  limit?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawTargetScale".
 */
export interface IRawTargetScale {
  kind: 'replicas' | 'split';
  rate_per_gpu?: number | null;
  replicas?: number | null;
  gpus_per_replica?: number | null;
  gpus?: number | null;
  busy_s?: number | null;
  idle_s?: number | null;
  exchanged_bytes?: number | null;
  link_bytes_per_s?: number | null;
  link_source?: string | null;
  options?: IRawScaleOption[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawScaleOption".
 */
export interface IRawScaleOption {
  gpus?: number | null;
  span_s?: number | null;
  comm_s?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawTargetCapacity".
 */
export interface IRawTargetCapacity {
  peak_bytes?: number | null;
  capacity_bytes?: number | null;
  gpus?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSweep".
 */
export interface IRawSweep {
  points: {
    columns: string[];
    data: unknown[][];
  };
  schema?: string | null;
  variable?: string | null;
  device?: string | null;
  stopped?: string | null;
  version?: number | null;
  gpu?: boolean | null;
  oom_at?: number | null;
  knee?: number | null;
  best?: number | null;
  runs_total?: number | null;
  elapsed_s?: number | null;
  fit?: IRawSweepFit | null;
  confirmation?: IRawSweepConfirmation | null;
  doublings?: {
    columns: string[];
    data: unknown[][];
  } | null;
  capacity?: {
    columns: string[];
    data: unknown[][];
  } | null;
  guides?: {
    [k: string]: (number | null)[][];
  } | null;
  notes?: string[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSweepFit".
 */
export interface IRawSweepFit {
  kind: string;
  per_item_bytes: number;
  fixed_bytes: number;
  max_miss: number;
  coefficients?: number[];
  capacity_bytes?: number | null;
  predicted_largest?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSweepConfirmation".
 */
export interface IRawSweepConfirmation {
  size: number;
  fits?: boolean | null;
  peak_bytes?: number | null;
  predicted_peak_bytes?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawMemory".
 */
export interface IRawMemory {
  peak_bytes: number | null;
  schema?: string | null;
  device?: string | null;
  version?: number | null;
  gpu?: boolean | null;
  allocator_peak_bytes?: number | null;
  before_bytes?: number | null;
  capacity_bytes?: number | null;
  peak_time_s?: number;
  unattributed_bytes?: number | null;
  at_peak?: {
    [k: string]: number;
  };
  timeline?: IRawMemoryTimeline | null;
  largest?: {
    columns: string[];
    data: unknown[][];
  } | null;
  advice?: string[];
  notes?: string[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawMemoryTimeline".
 */
export interface IRawMemoryTimeline {
  times_s?: number[];
  categories?: string[];
  bytes?: number[][];
  allocated?: number[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawDisplay".
 */
export interface IRawDisplay {
  main_dtype?: string | null;
  roofline?: IRawRooflineSpec | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawRooflineSpec".
 */
export interface IRawRooflineSpec {
  x_range: number[];
  y_range: number[];
  bandwidth: IRawRooflineBandwidth | null;
  ceilings: IRawRooflineCeiling[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawRooflineBandwidth".
 */
export interface IRawRooflineBandwidth {
  bytes_per_s: number;
  x: number[];
  y: number[];
  label: string;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawRooflineCeiling".
 */
export interface IRawRooflineCeiling {
  flops_per_s: number;
  dtypes: string[];
  ridge: number | null;
  x: number[];
  label: string;
  used: boolean;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawWhatIf".
 */
export interface IRawWhatIf {
  predicted_by: string;
  targets: IRawWhatIfTarget[];
  not_modelled?: string[];
  max_factor?: number;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawWhatIfTarget".
 */
export interface IRawWhatIfTarget {
  id: string;
  kind: string;
  key: string;
  label: string;
  change: string;
  scalable: boolean;
  factors: number[];
  ratios: number[];
  limit: number;
  name?: string | null;
  shapes?: string | null;
  time_s?: number | null;
  share?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJob".
 */
export interface IRawJob {
  schema: 'jupyter_brrr.job';
  version: number;
  summary: IRawJobSummary;
  ranks: {
    columns: string[];
    data: unknown[][];
  };
  collectives: {
    columns: string[];
    data: unknown[][];
  };
  name?: string | null;
  created?: string | null;
  notes?: string[];
  recommendations?: IRawJobRecommendation[];
  steps?: {
    columns: string[];
    data: unknown[][];
  } | null;
  calls?: {
    columns: string[];
    data: unknown[][];
    total?: number | null;
  } | null;
  lanes?: {
    columns: string[];
    data: unknown[][];
  } | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJobSummary".
 */
export interface IRawJobSummary {
  ranks?: number[];
  world_size?: number | null;
  backend?: string | null;
  devices?: string[];
  gpu?: boolean | null;
  hosts?: string[];
  one_clock?: boolean | null;
  steps?: (string | number | boolean | null)[];
  span_s?: number | null;
  comm_s?: number | null;
  exposed_comm_s?: number | null;
  work_median_s?: number | null;
  work_max_s?: number | null;
  exposed_share?: number | null;
  overlap?: number | null;
  imbalance?: number | null;
  busiest_rank?: number | null;
  straggler?: IRawJobStraggler | null;
  link_source?: string | null;
  collective_calls?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJobStraggler".
 */
export interface IRawJobStraggler {
  rank?: number | null;
  decided?: number | null;
  collectives?: number | null;
  last_count?: number | null;
  steps?: number | null;
  noise_s?: number | null;
  lateness_s?: number | null;
  others_wait_s?: number | null;
  lateness_per_step_s?: number | null;
  others_wait_per_step_s?: number | null;
  share?: number | null;
  varies?: {
    [k: string]: number;
  };
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJobRecommendation".
 */
export interface IRawJobRecommendation {
  title: string;
  detail: string;
  kind?: string | null;
  share?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawHistory".
 */
export interface IRawHistory {
  schema: 'jupyter_brrr.history';
  version: number;
  name: string;
  runs: IRawHistoryRun[];
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawHistoryRunFile".
 */
export interface IRawHistoryRunFile {
  schema: 'jupyter_brrr.history_run';
  version: number;
  name: string;
  run: number;
  report: {
    [k: string]: unknown;
  };
  code_sha1?: string | null;
  target?: IRawHistoryRunGoal | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawHistoryRunGoal".
 */
export interface IRawHistoryRunGoal {
  text?: string | null;
  items?: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawOpRow".
 */
export interface IRawOpRow {
  name: string;
  shapes: string | null;
  dtypes: string | null;
  category: string | null;
  module: string | null;
  calls: number | null;
  gpu_time_s: number | null;
  total_gpu_time_s: number | null;
  cpu_time_s: number | null;
  self_cpu_time_s: number | null;
  kernels: number | null;
  flops: number | null;
  bytes: number | null;
  intensity: number | null;
  flops_per_s: number | null;
  bytes_per_s: number | null;
  roof_fraction: number | null;
  bound: string | null;
  dtype: string | null;
  roof: string | null;
  roof_basis: string | null;
  roof_flag: string | null;
  cost_model: string | null;
  regime: string | null;
  reason: string | null;
  why: string | null;
  line: string | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawKernelRow".
 */
export interface IRawKernelRow {
  name: string;
  op: string | null;
  category: string | null;
  stream: string | number | boolean | null;
  start_s: number | null;
  dur_s: number | null;
  count: number | null;
  flops: number | null;
  bytes: number | null;
  bound: string | null;
  module: string | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawCpuOpRow".
 */
export interface IRawCpuOpRow {
  name: string;
  tid: string | number | boolean | null;
  start_s: number | null;
  dur_s: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawStepRow".
 */
export interface IRawStepRow {
  step: string;
  kind: string | null;
  start_s: number | null;
  span_s: number | null;
  busy_s: number | null;
  compute_s: number | null;
  memory_s: number | null;
  communication_s: number | null;
  other_s: number | null;
  idle_s: number | null;
  kernels: number | null;
  host_s: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawModuleRow".
 */
export interface IRawModuleRow {
  path: string;
  parent: string | null;
  depth: number;
  calls: number | null;
  kernels: number | null;
  self_gpu_time_s: number | null;
  gpu_time_s: number | null;
  self_cpu_time_s: number | null;
  cpu_time_s: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawChangeSplitRow".
 */
export interface IRawChangeSplitRow {
  part: string;
  before_s: number | null;
  after_s: number | null;
  delta_s: number | null;
  before_share: number | null;
  after_share: number | null;
  verdict: ('faster' | 'slower' | 'noise' | 'uncertain' | '') | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawChangeOpRow".
 */
export interface IRawChangeOpRow {
  name: string;
  shapes: string | null;
  dtypes: string | null;
  category: string | null;
  calls_before: number | null;
  calls_after: number | null;
  time_before_s: number | null;
  time_after_s: number | null;
  share_before: number | null;
  share_after: number | null;
  delta_s: number | null;
  status: ('both' | 'appeared' | 'vanished') | null;
  verdict: ('faster' | 'slower' | 'noise' | 'uncertain' | '') | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawChangeCountRow".
 */
export interface IRawChangeCountRow {
  what: string;
  before: number | null;
  after: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawChangeByNameRow".
 */
export interface IRawChangeByNameRow {
  name: string;
  calls_before: number | null;
  calls_after: number | null;
  time_before_s: number | null;
  time_after_s: number | null;
  share_before: number | null;
  share_after: number | null;
  delta_s: number | null;
  verdict: ('faster' | 'slower' | 'noise' | 'uncertain' | '') | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawChangeCategoryRow".
 */
export interface IRawChangeCategoryRow {
  category: string | null;
  ops: number | null;
  calls_before: number | null;
  calls_after: number | null;
  time_before_s: number | null;
  time_after_s: number | null;
  share_before: number | null;
  share_after: number | null;
  delta_s: number | null;
  verdict: ('faster' | 'slower' | 'noise' | 'uncertain' | '') | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawChangeKernelRow".
 */
export interface IRawChangeKernelRow {
  name: string;
  launches_before: number | null;
  launches_after: number | null;
  time_before_s: number | null;
  time_after_s: number | null;
  status: ('both' | 'appeared' | 'vanished') | null;
  delta_s: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawAmdahlRow".
 */
export interface IRawAmdahlRow {
  kind: string | null;
  part: string;
  share_before: number | null;
  time_before_s: number | null;
  time_after_s: number | null;
  part_speedup: number | null;
  predicted_speedup: number | null;
  predicted_low: number | null;
  predicted_high: number | null;
  predicted_span_s: number | null;
  measured_speedup: number | null;
  limit: number | null;
  predicted_by: string | number | boolean | null;
  not_modelled: string | number | boolean | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSweepPointRow".
 */
export interface IRawSweepPointRow {
  size: number;
  status: string | null;
  span_s: number | null;
  q1_s: number | null;
  q3_s: number | null;
  busy_s: number | null;
  compute_s: number | null;
  memory_s: number | null;
  communication_s: number | null;
  other_s: number | null;
  idle_s: number | null;
  flops_per_s: number | null;
  bytes_per_s: number | null;
  peak_memory_bytes: number | null;
  memory_increase_bytes: number | null;
  items: number | null;
  items_per_s: number | null;
  runs: number | null;
  launches: number | null;
  error: string | null;
  minItems?: 0;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSweepDoublingRow".
 */
export interface IRawSweepDoublingRow {
  from_size: number;
  to_size: number;
  time_ratio: number | null;
  per_doubling: number | null;
  verdict: string | null;
  why: string | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawSweepCapacityRow".
 */
export interface IRawSweepCapacityRow {
  device: string;
  capacity_bytes: number | null;
  largest_size: number | null;
  this_gpu: boolean | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawMemoryLargestRow".
 */
export interface IRawMemoryLargestRow {
  bytes: number | null;
  category: string | null;
  op: string | null;
  line: string | null;
  time_s: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJobRankRow".
 */
export interface IRawJobRankRow {
  rank: number;
  file: string | null;
  host: string | null;
  device: string | null;
  backend: string | null;
  span_s: number | null;
  compute_s: number | null;
  memory_s: number | null;
  other_s: number | null;
  communication_s: number | null;
  idle_s: number | null;
  work_s: number | null;
  comm_s: number | null;
  hidden_comm_s: number | null;
  overlap: number | null;
  calls: number | null;
  last_count: number | null;
  lateness_s: number | null;
  wait_s: number | null;
  clock_offset_s: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJobCollectiveRow".
 */
export interface IRawJobCollectiveRow {
  group: string | number | boolean | null;
  group_size: number | null;
  op: string | null;
  bytes: number | null;
  dtype: string | number | boolean | null;
  where: string | number | boolean | null;
  calls: number | null;
  time_s: number | null;
  median_s: number | null;
  algbw: number | null;
  busbw: number | null;
  link_peak: number | null;
  link_fraction: number | null;
  algorithm: string | number | boolean | null;
  ranks: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJobStepRow".
 */
export interface IRawJobStepRow {
  rank: number;
  step: string | number | boolean | null;
  kind: string | null;
  start_s: number | null;
  span_s: number | null;
  compute_s: number | null;
  memory_s: number | null;
  other_s: number | null;
  comm_s: number | null;
  exposed_comm_s: number | null;
  last_count: number | null;
  lateness_s: number | null;
  wait_s: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJobCallRow".
 */
export interface IRawJobCallRow {
  rank: number;
  instance: string | number | boolean | null;
  group: string | number | boolean | null;
  op: string | number | boolean | null;
  bytes: number | null;
  dtype: string | number | boolean | null;
  where: string | number | boolean | null;
  step: string | number | boolean | null;
  enqueue_s: number | null;
  arrival_s: number | null;
  start_s: number | null;
  end_s: number | null;
}
/**
 * This interface was referenced by `IRawDocuments`'s JSON-Schema
 * via the `definition` "IRawJobLaneRow".
 */
export interface IRawJobLaneRow {
  rank: number;
  part: string;
  start_s: number | null;
  end_s: number | null;
}

// The constants the browser shares with Python.
export const SCHEMA_NAME = 'jupyter_brrr.report';
export const SCHEMA_VERSION = 2;
export const MIME_TYPE = 'application/vnd.jupyter-brrr.report+json';
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
export const CANNOT_PAY_SHARE = 0.02;
export const OPS_COLUMNS = [
  'name',
  'shapes',
  'dtypes',
  'category',
  'module',
  'calls',
  'gpu_time_s',
  'total_gpu_time_s',
  'cpu_time_s',
  'self_cpu_time_s',
  'kernels',
  'flops',
  'bytes',
  'intensity',
  'flops_per_s',
  'bytes_per_s',
  'roof_fraction',
  'bound',
  'dtype',
  'roof',
  'roof_basis',
  'roof_flag',
  'cost_model',
  'regime',
  'reason',
  'why',
  'line'
] as const;
export const KERNEL_COLUMNS = [
  'name',
  'op',
  'category',
  'stream',
  'start_s',
  'dur_s',
  'count',
  'flops',
  'bytes',
  'bound',
  'module'
] as const;
export const CPU_OP_COLUMNS = ['name', 'tid', 'start_s', 'dur_s'] as const;
export const STEP_COLUMNS = [
  'step',
  'kind',
  'start_s',
  'span_s',
  'busy_s',
  'compute_s',
  'memory_s',
  'communication_s',
  'other_s',
  'idle_s',
  'kernels',
  'host_s'
] as const;
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
export const SWEEP_DOUBLING_COLUMNS = [
  'from_size',
  'to_size',
  'time_ratio',
  'per_doubling',
  'verdict',
  'why'
] as const;
export const SWEEP_CAPACITY_COLUMNS = [
  'device',
  'capacity_bytes',
  'largest_size',
  'this_gpu'
] as const;
export const SWEEP_VERDICTS = [
  'overhead',
  'fixed',
  'transition',
  'compute',
  'memory',
  'saturated',
  'superlinear'
] as const;
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
export const MEMORY_LARGEST_COLUMNS = [
  'bytes',
  'category',
  'op',
  'line',
  'time_s'
] as const;
export const COMPARISON_SCHEMA_NAME = 'jupyter_brrr.comparison';
export const COMPARISON_SCHEMA_VERSION = 1;
export const COMPARISON_MIME_TYPE =
  'application/vnd.jupyter-brrr.comparison+json';
export const HISTORY_SCHEMA_NAME = 'jupyter_brrr.history';
export const HISTORY_SCHEMA_VERSION = 1;
export const HISTORY_MIME_TYPE = 'application/vnd.jupyter-brrr.history+json';
export const JOB_SCHEMA_NAME = 'jupyter_brrr.job';
export const JOB_SCHEMA_VERSION = 1;
export const JOB_MIME_TYPE = 'application/vnd.jupyter-brrr.job+json';
export const JOB_SPLIT_PARTS = [
  'compute',
  'memory',
  'other',
  'communication',
  'idle'
] as const;
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
export const JOB_LANE_COLUMNS = ['rank', 'part', 'start_s', 'end_s'] as const;
