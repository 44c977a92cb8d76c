/**
 * The standalone HTML file's entry point (`report.save_html(path)`): the
 * same report app as in JupyterLab, bundled with BokehJS into one script
 * that the Python side inlines next to the report JSON, so the file opens
 * offline and looks like the notebook view.
 *
 * The page holds the report in a `<script type="application/json">` block
 * (data, never executed) and an element to draw into; both are found by id.
 */

import { ReportApp } from './app';
import * as charts from './charts';

/** The id of the element that holds the report JSON. */
export const DATA_ID = 'jupyter-brrr-report';
/** The id of the element the report is drawn into. */
export const ROOT_ID = 'jupyter-brrr-root';

/** Draw the report embedded in the page; resolves when the first view is drawn. */
export async function main(): Promise<void> {
  const root = document.getElementById(ROOT_ID);
  const data = document.getElementById(DATA_ID);
  if (!root || !data) {
    throw new Error(
      `jupyter_brrr: this page has no #${ROOT_ID} or #${DATA_ID} element.`
    );
  }
  // BokehJS is part of this bundle: no lazy loading from elsewhere.
  const app = new ReportApp(root, { charts: () => Promise.resolve(charts) });
  let doc: unknown;
  try {
    doc = JSON.parse(data.textContent ?? '');
  } catch {
    doc = null; // the app shows why it cannot read it
  }
  await app.render(doc);
}

void main();
