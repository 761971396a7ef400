// Periodic refreshes that spare the server: one run at a time, none while the tab is hidden.

import { showError } from './notice.js';

// REFRESH_MS is the time between two refreshes of a page's numbers.
export const REFRESH_MS = 5000;

// every runs task at once, then again intervalMs after each run ends, so that a slow server
// never has two runs of one page in flight. It pauses while the tab is hidden, runs at once
// when it shows again, and stops for good when signal aborts (the page was left). A failed
// run shows its error and the next one tries again. now() runs it at once, after an action.
export function every(intervalMs, signal, task) {
  let timer = null;
  let running = false;
  let again = false; // now() was called during a run

  const run = async () => {
    clearTimeout(timer);
    timer = null;
    if (signal.aborted || document.hidden) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await task();
    } catch (err) {
      if (!signal.aborted) showError(err);
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      run();
    } else if (!signal.aborted && !document.hidden) {
      timer = setTimeout(run, intervalMs);
    }
  };

  const onVisibility = () => (document.hidden ? clearTimeout(timer) : run());
  document.addEventListener('visibilitychange', onVisibility);
  signal.addEventListener('abort', () => {
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisibility);
  });
  run();
  return { now: run };
}

// eachLimited calls fn on every item, at most limit at a time, and waits for all: a page of
// queues asks for their stats in parallel without queueing dozens of requests at once.
export async function eachLimited(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
