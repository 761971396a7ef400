// The backlog of the queues seen in this tab, for the queue page's chart. The API keeps no
// history of its counts, so the page keeps the totals of every stats answer it polled, on
// any page, for the last WINDOW_MS: a queue opened from the list has a chart at once.

export const WINDOW_MS = 10 * 60 * 1000;

// MAX_QUEUES bounds the memory a long session browsing many queues keeps.
const MAX_QUEUES = 200;

const samples = new Map(); // queue ID → [{ at, ...totals }], oldest first (totals: stats.js)

// record adds the totals of one stats answer of the queue, and forgets what is older than
// the window.
export function record(queueId, totals, at = Date.now()) {
  const list = samples.get(queueId) ?? [];
  samples.delete(queueId); // re-inserted last: the Map's order is then least recently seen first
  list.push({ at, ...totals });
  while (list.length > 0 && list[0].at < at - WINDOW_MS) list.shift();
  samples.set(queueId, list);
  if (samples.size > MAX_QUEUES) samples.delete(samples.keys().next().value);
}

// samplesOf returns the queue's samples, oldest first.
export function samplesOf(queueId) {
  return samples.get(queueId) ?? [];
}
