/**
 * The tabs of each document the apps draw (app.ts): a report's, a job
 * report's, a comparison's and a history's, each in the order they are
 * shown. A new view is one entry here: its id (also its test id, `brrr-tab-<id>`), its label,
 * the function that draws it into its panel, and, for a report's tab that
 * only some reports have, when it shows.
 */

import type { IChartHandle, IChartTheme } from './charts';
import { h } from './dom';
import type { ReportData } from './model';
import type { IComparison, IHistoryDocument } from './schema';
import { renderAB } from './views/ab';
import { historySection, renderChange, renderComparison } from './views/change';
import { renderMemory } from './views/memory';
import { renderSweep } from './views/sweep';
import { emptyState, type IViewContext } from './views/common';
import { renderOperators } from './views/operators';
import { renderOverview } from './views/overview';
import { IJobContext, renderRankTimeline, renderRanks } from './views/ranks';
import { renderRoofline } from './views/roofline';
import { renderTimeline } from './views/timeline';
import { renderWhatIf } from './views/whatif';

/** One tab of a document, drawn with the context `C` its app makes. */
export interface ITab<C = IViewContext> {
  /** Stable id: the panel's data-panel and the button's test id. */
  id: string;
  /** The button's text. */
  label: string;
  /** Draw the view into its (empty) panel; called once, when first opened. */
  render: (panel: HTMLElement, ctx: C) => void | Promise<void>;
  /** Open this tab when a document is updated in place and the tab has just appeared. */
  openWhenNew?: boolean;
}

/** One tab of the report. */
export interface IReportTab extends ITab<IViewContext> {
  /** Whether this report has the tab (always, when left out). */
  when?: (data: ReportData) => boolean;
}

/** Every tab of a report, in order. */
export const TABS: IReportTab[] = [
  { id: 'overview', label: 'Overview', render: renderOverview },
  { id: 'operators', label: 'Operators', render: renderOperators },
  { id: 'roofline', label: 'Roofline', render: renderRoofline },
  { id: 'timeline', label: 'Timeline', render: renderTimeline },
  { id: 'whatif', label: 'What-if', render: renderWhatIf },
  {
    id: 'ab',
    label: 'A/B',
    render: renderAB,
    when: data => data.report.ab !== null && data.report.ab !== undefined,
    openWhenNew: true
  },
  {
    id: 'change',
    label: 'Change',
    render: renderChange,
    // A named run (its change and runs), or a --target.
    when: data =>
      !!data.report.change ||
      !!data.report.target ||
      (data.report.history ?? []).length > 0
  },
  {
    id: 'sweep',
    label: 'Sweep',
    render: renderSweep,
    when: data => !!data.report.sweep
  },
  {
    id: 'memory',
    label: 'Memory',
    render: renderMemory,
    when: data => !!data.report.memory
  }
];

/** The tabs a report shows. */
export function tabsFor(data: ReportData): IReportTab[] {
  return TABS.filter(t => !t.when || t.when(data));
}

/** A job report's tabs (the ranks of one distributed run), in order. */
export const JOB_TABS: ITab<IJobContext>[] = [
  { id: 'ranks', label: 'Ranks', render: renderRanks },
  { id: 'rank-timeline', label: 'Timeline', render: renderRankTimeline }
];

/** What a comparison's tab draws from. */
export interface IComparisonContext {
  /** The comparison of two measurements (jupyter_brrr.diff). */
  comparison: IComparison;
}

/** A comparison's tabs: the Change view alone. */
export const COMPARISON_TABS: ITab<IComparisonContext>[] = [
  {
    id: 'change',
    label: 'Change',
    render: (panel, ctx) =>
      renderComparison(panel, ctx.comparison, 'What changed')
  }
];

/** What a history's tab draws from. */
export interface IHistoryContext {
  /** A named cell's runs (%brrr history NAME). */
  history: IHistoryDocument;
  /** Colours of the current theme. */
  theme(): IChartTheme;
  /** Keep a chart so that it is removed with the view. */
  track(handle: IChartHandle): void;
}

/** A history's tabs: the Change tab's chart of the runs and its runs table. */
export const HISTORY_TABS: ITab<IHistoryContext>[] = [
  {
    id: 'history',
    label: 'Runs',
    render: async (panel, ctx) => {
      const runs = ctx.history.runs;
      if (!runs.length) {
        panel.appendChild(
          emptyState(
            'No runs of this name yet.',
            `Run a cell with %%brrr --name ${ctx.history.name}: each run is kept under the name.`
          )
        );
        return;
      }
      const sec = h('section', {
        class: 'jp-brrr-section',
        data: { testid: 'brrr-history' }
      });
      panel.appendChild(sec);
      await historySection(runs, null, ctx, sec);
    }
  }
];
