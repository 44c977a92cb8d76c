/**
 * The standalone HTML file's entry point (`report.save_html(path)`,
 * `job.save_html(path)`): the same apps as in JupyterLab, bundled with
 * BokehJS into one script that the Python side inlines next to the report
 * JSON, so the file opens offline and looks like the notebook view.
 *
 * The page holds the document in a `<script type="application/json">` block
 * (data, never executed) and an element to draw into; both are found by id.
 * A job report (its schema says so) is drawn by the job app, anything else
 * by the report app, which says why when it cannot read it.
 */

import { ReportApp } from './app';
import * as charts from './charts';
import { JobApp } from './job_app';
import { JOB_SCHEMA_NAME } from './schema';

/** The id of the element that holds the report (or job report) JSON. */
export const DATA_ID = 'jupyter-brrr-report';
/** The id of the element the report is drawn into. */
export const ROOT_ID = 'jupyter-brrr-root';

/** Draw the document embedded in the page; resolves when the first view is drawn. */
export async function main(): Promise<void> {
  const root = document.getElementById(ROOT_ID);
  const data = document.getElementById(DATA_ID);
  if (!root || !data) {
    throw new Error(
      `jupyter_brrr: this page has no #${ROOT_ID} or #${DATA_ID} element.`
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(data.textContent ?? '');
  } catch {
    doc = null; // the app shows why it cannot read it
  }
  const isJob =
    typeof doc === 'object' &&
    doc !== null &&
    (doc as { schema?: unknown }).schema === JOB_SCHEMA_NAME;
  // BokehJS is part of this bundle: no lazy loading from elsewhere.
  const options = { charts: () => Promise.resolve(charts) };
  const app = isJob ? new JobApp(root, options) : new ReportApp(root, options);
  await app.render(doc);
}

void main();
