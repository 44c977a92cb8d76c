/**
 * The standalone HTML file's entry point (`save_html(path)` of a report, a
 * job report, a comparison or a history): the same apps as in JupyterLab, bundled with
 * BokehJS into one script that the Python side inlines next to the report
 * JSON, so the file opens offline and looks like the notebook view.
 *
 * The page holds the document in a `<script type="application/json">` block
 * (data, never executed) and an element to draw into; both are found by id.
 * The document's schema picks the app: a job report's the job app, a
 * comparison's the comparison app (the Change view), a history's the history
 * app (its runs chart and table); anything else the report app, which says
 * why when it cannot read it.
 */

import { ReportApp } from './app';
import * as charts from './charts';
import { ComparisonApp, HistoryApp, JobApp } from './job_app';
import {
  COMPARISON_SCHEMA_NAME,
  HISTORY_SCHEMA_NAME,
  JOB_SCHEMA_NAME
} from './schema';

/** The id of the element that holds the document's JSON. */
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
  const schema =
    typeof doc === 'object' && doc !== null
      ? (doc as { schema?: unknown }).schema
      : undefined;
  // BokehJS is part of this bundle: no lazy loading from elsewhere.
  const options = { charts: () => Promise.resolve(charts) };
  const app =
    schema === JOB_SCHEMA_NAME
      ? new JobApp(root, options)
      : schema === COMPARISON_SCHEMA_NAME
        ? new ComparisonApp(root, options)
        : schema === HISTORY_SCHEMA_NAME
          ? new HistoryApp(root, options)
          : new ReportApp(root, options);
  await app.render(doc);
}

/** The kind of message that tells the notebook output around a frame the app's height. */
export const FRAME_MESSAGE = 'jupyter_brrr.frame';

/**
 * In a notebook output's sandboxed frame (jupyter_brrr/views/frame.py, for
 * front ends without the extension), tell the output the app has drawn, and
 * its height each time it changes (a tab opened): the output then sizes the
 * frame to it and hides its static fallback. The frame's origin is opaque, so
 * the output cannot measure it itself.
 */
export function tellTheFrame(root: HTMLElement): void {
  if (window.parent === window) {
    return; // a page of its own (save_html)
  }
  const post = (): void => {
    const style = getComputedStyle(document.body);
    const height =
      root.getBoundingClientRect().height +
      parseFloat(style.paddingTop) +
      parseFloat(style.paddingBottom);
    window.parent.postMessage({ kind: FRAME_MESSAGE, height }, '*');
  };
  new ResizeObserver(post).observe(root);
  post();
}

void main().then(() => {
  if (document.body.classList.contains('jp-brrr-in-frame')) {
    tellTheFrame(document.getElementById(ROOT_ID) as HTMLElement);
  }
});
