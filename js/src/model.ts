/**
 * A parsed report with the derived figures that several views use, each
 * computed once on first use.
 */

import {
  cpuOpRows,
  ICpuOpRow,
  IKernelRow,
  IModuleRow,
  IOpRow,
  IReport,
  IRooflineSpec,
  isCpuOnly,
  kernelRows,
  moduleRows,
  opRows
} from './schema';

/** The four parts of the span. */
export const SPLIT_KEYS = [
  'compute',
  'memory',
  'communication',
  'other',
  'idle'
] as const;

/** One of SPLIT_KEYS. */
export type SplitKey = (typeof SPLIT_KEYS)[number];

/**
 * The time an op row counts for: its self GPU time, or in a report without
 * GPU work its self CPU time (its CPU time where no self time was recorded).
 */
export function opTime(o: IOpRow, cpu: boolean): number {
  return cpu ? (o.self_cpu_time_s ?? o.cpu_time_s ?? 0) : (o.gpu_time_s ?? 0);
}

/** A report plus lazily derived tables. */
export class ReportData {
  constructor(readonly report: IReport) {}

  /** Ops as typed rows. */
  get ops(): IOpRow[] {
    return (this._ops ??= opRows(this.report));
  }

  /** The module tree as typed rows (empty where no op ran in a module). */
  get modules(): IModuleRow[] {
    return (this._modules ??= moduleRows(this.report));
  }

  /** Kernels as typed rows. */
  get kernels(): IKernelRow[] {
    return (this._kernels ??= kernelRows(this.report));
  }

  /** CPU ops as typed rows. */
  get cpuOps(): ICpuOpRow[] {
    return (this._cpuOps ??= cpuOpRows(this.report));
  }

  /** Kernel rows grouped by the op that launched them. */
  get kernelsByOp(): Map<string, IKernelRow[]> {
    if (!this._byOp) {
      const m = new Map<string, IKernelRow[]>();
      for (const k of this.kernels) {
        const list = m.get(k.op);
        if (list) {
          list.push(k);
        } else {
          m.set(k.op, [k]);
        }
      }
      this._byOp = m;
    }
    return this._byOp;
  }

  /** True when there is no GPU work to show: no GPU found, or none used. */
  get cpuOnly(): boolean {
    return isCpuOnly(this.report);
  }

  /** True when the device is not a GPU (as opposed to a GPU left unused). */
  get noGpuFound(): boolean {
    const d = (this.report.summary.device ?? '').trim().toUpperCase();
    return d === '' || d === 'CPU';
  }

  /** Why a CPU-only report has no GPU work, and what to do about it: no GPU at all, or a
   * GPU that the code left unused. */
  get noGpuMessage(): { title: string; detail: string } {
    return this.noGpuFound
      ? {
          title: 'No GPU was found.',
          detail:
            'torch.cuda.is_available() was False where this ran: profile on a machine with a CUDA GPU and a CUDA build of PyTorch.'
        }
      : {
          title: 'No GPU work was recorded.',
          detail:
            'The code ran on the CPU only: move the model and its inputs to the GPU (.to("cuda")) and profile again.'
        };
  }

  /** True when the report holds no ops, kernels or CPU ops at all. */
  get empty(): boolean {
    const r = this.report;
    return (
      r.ops.data.length === 0 &&
      r.kernels.data.length === 0 &&
      r.cpu_ops.data.length === 0
    );
  }

  /** True when there is no GPU work (no kernels and no GPU time). */
  get noGpuWork(): boolean {
    if (this.report.kernels.data.length > 0) {
      return false;
    }
    return !this.ops.some(o => (o.gpu_time_s ?? 0) > 0);
  }

  /** The span of one run, falling back to the sum of its parts. */
  get span(): number | null {
    const s = this.report.summary;
    if (s.span_s !== null && s.span_s > 0) {
      return s.span_s;
    }
    const parts = SPLIT_KEYS.map(k => this.splitTime(k));
    const sum = parts.reduce<number>((a, b) => a + (b ?? 0), 0);
    return sum > 0 ? sum : null;
  }

  /** Time of one part of the span. */
  splitTime(key: SplitKey): number | null {
    const s = this.report.summary;
    switch (key) {
      case 'compute':
        return s.compute_s;
      case 'memory':
        return s.memory_s;
      case 'communication':
        // Reports written before this part existed have none.
        return s.communication_s ?? 0;
      case 'other':
        return s.other_s;
      case 'idle':
        if (s.idle_s !== null) {
          return s.idle_s;
        }
        if (s.span_s !== null && s.busy_s !== null) {
          return Math.max(0, s.span_s - s.busy_s);
        }
        return null;
    }
  }

  /** Share of the span of one part (0..1), null when unknown. */
  splitShare(key: SplitKey): number | null {
    const span = this.span;
    const t = this.splitTime(key);
    if (span === null || span <= 0 || t === null) {
      return null;
    }
    return Math.min(1, Math.max(0, t / span));
  }

  /** Fraction of the span in which the GPU ran something. */
  get busyShare(): number | null {
    const s = this.report.summary;
    const span = this.span;
    if (span === null || span <= 0) {
      return null;
    }
    if (s.busy_s !== null) {
      return Math.min(1, s.busy_s / span);
    }
    const idle = this.splitTime('idle');
    return idle === null ? null : Math.max(0, 1 - idle / span);
  }

  /** The op rows a roofline can place: FLOPs, bytes and GPU time all known and positive. */
  get roofOps(): IOpRow[] {
    return (this._roofOps ??= this.ops.filter(
      o => (o.flops ?? 0) > 0 && (o.bytes ?? 0) > 0 && (o.gpu_time_s ?? 0) > 0
    ));
  }

  /** Sum of op self CPU time. */
  get opCpuTime(): number {
    return (this._opCpu ??= this.ops.reduce((a, o) => a + opTime(o, true), 0));
  }

  /** An op's share of the profiled run's CPU op time (self CPU over all ops' self CPU): the
   * share the Overview's top ops and the What-if quote for a report without GPU work. */
  opCpuShare(o: IOpRow): number | null {
    const total = this.opCpuTime;
    return total > 0 ? opTime(o, true) / total : null;
  }

  /** True for a report saved before schema version 2, which carries no display specs
   * (`display`): its roofline and the dtype of its main peak are drawn once Python reads it
   * again (`python -m jupyter_brrr upgrade NOTEBOOK.ipynb`, or running the cell again). */
  get olderVersion(): boolean {
    return this.report.display === null;
  }

  /** The dtype (roof) of most of the modelled FLOPs that ran on the GPU, whose peak the
   * overview quotes (computed in Python: display.main_dtype); null when no op with a FLOP
   * model ran there, or in a report of an older version. */
  get mainDtype(): string | null {
    return this.report.display?.main_dtype ?? null;
  }

  /** The roofline's geometry (computed in Python: display.roofline); null where no op
   * can be placed on it, or in a report of an older version. */
  get roofline(): IRooflineSpec | null {
    return this.report.display?.roofline ?? null;
  }

  private _ops?: IOpRow[];
  private _modules?: IModuleRow[];
  private _kernels?: IKernelRow[];
  private _cpuOps?: ICpuOpRow[];
  private _byOp?: Map<string, IKernelRow[]>;
  private _opCpu?: number;
  private _roofOps?: IOpRow[];
}
