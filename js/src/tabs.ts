/**
 * The report's tabs, in the order they are shown. A new view is one entry
 * here: its id (also its test id, `brrr-tab-<id>`), its label, the function
 * that draws it into its panel, and, for a tab that only some reports have,
 * when it shows.
 */

import type { ReportData } from './model';
import { renderAB } from './views/ab';
import { renderChange } from './views/change';
import { renderMemory } from './views/memory';
import { renderSweep } from './views/sweep';
import type { IViewContext } from './views/common';
import { renderOperators } from './views/operators';
import { renderOverview } from './views/overview';
import { renderRoofline } from './views/roofline';
import { renderTimeline } from './views/timeline';
import { renderWhatIf } from './views/whatif';

/** One tab of the report. */
export interface ITab {
  /** Stable id: the panel's data-panel and the button's test id. */
  id: string;
  /** The button's text. */
  label: string;
  /** Draw the view into its (empty) panel; called once, when first opened. */
  render: (panel: HTMLElement, ctx: IViewContext) => void | Promise<void>;
  /** Whether this report has the tab (always, when left out). */
  when?: (data: ReportData) => boolean;
  /** Open this tab when a report is updated in place and the tab has just appeared. */
  openWhenNew?: boolean;
}

/** Every tab, in order. */
export const TABS: ITab[] = [
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
export function tabsFor(data: ReportData): ITab[] {
  return TABS.filter(t => !t.when || t.when(data));
}
