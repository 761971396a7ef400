// A queue's stats (GET /v1/queues/{id}/stats) as table cells, for the list and the queue page.

import { count, duration, h } from './dom.js';

export const PRIORITIES = ['HIGH', 'MEDIUM', 'LOW'];

// COLUMNS are the counts of one priority: the stats member and the cell's class.
const COLUMNS = [
  ['ready', 'ready'],
  ['delayed', 'delayed'],
  ['in_flight', 'in-flight'],
  ['dead_lettered', 'dead'],
];

// headerCells returns the column headings of statCells.
export function headerCells() {
  return [
    h('th', { scope: 'col', class: 'num' }, 'Ready'),
    h('th', { scope: 'col', class: 'num' }, 'Delayed'),
    h('th', { scope: 'col', class: 'num' }, 'In flight'),
    h('th', { scope: 'col', class: 'num' }, 'Dead letters'),
    h('th', { scope: 'col', class: 'num' }, 'Oldest ready'),
  ];
}

// statCells returns the empty cells of one priority's counts, filled by fillCells.
export function statCells() {
  return [...COLUMNS.map(([, cls]) => h('td', { class: `num ${cls}` }, '…')),
    h('td', { class: 'num oldest' }, '…')];
}

// fillCells writes one priority's entry of a stats answer (undefined: not known) into the
// cells of statCells, in place, so that a refresh keeps the focus and the selection.
// deadLink, when given, is the address of the queue's dead letters, linked from a count.
export function fillCells(cells, entry, deadLink) {
  COLUMNS.forEach(([member], i) => {
    const value = entry?.[member];
    const text = count(value);
    const cell = cells[i];
    cell.classList.toggle('zero', value === 0);
    if (member === 'dead_lettered' && deadLink && value > 0) {
      cell.replaceChildren(h('a', { href: deadLink }, text));
    } else {
      cell.replaceChildren(text);
    }
  });
  const age = entry?.oldest_ready_age_seconds;
  cells[COLUMNS.length].textContent = entry?.ready > 0 ? duration(age) : '—';
}

// byPriority returns the entries of a stats answer by priority.
export function byPriority(stats) {
  return Object.fromEntries((stats?.priorities ?? []).map((p) => [p.priority, p]));
}

// totals sums a stats answer over the priorities; delayed is undefined when the server does
// not count it, and oldest is the largest oldest ready age.
export function totals(stats) {
  const sum = { ready: 0, delayed: 0, in_flight: 0, dead_lettered: 0, oldest_ready_age_seconds: 0 };
  for (const p of stats.priorities) {
    for (const member of ['ready', 'delayed', 'in_flight', 'dead_lettered']) {
      sum[member] = sum[member] === undefined || p[member] === undefined ? undefined : sum[member] + p[member];
    }
    if (p.ready > 0) sum.oldest_ready_age_seconds = Math.max(sum.oldest_ready_age_seconds, p.oldest_ready_age_seconds);
  }
  return sum;
}
