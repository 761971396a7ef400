// The page of all queues (/ui/?prefix=&after=): a page of queues by name, optionally those
// whose name starts with a prefix, with each priority's counts, refreshed every few seconds.

import { call, id } from '../api.js';
import { record } from '../backlog.js';
import { h } from '../dom.js';
import { attempt } from '../notice.js';
import { eachLimited, every, REFRESH_MS } from '../poll.js';
import { byPriority, fillCells, headerCells, PRIORITIES, statCells, totals } from '../stats.js';
import { navigate } from '../router.js';
import { settingsFields } from './queue.js';

// PAGE_SIZE queues are shown at a time: one stats call each per refresh.
const PAGE_SIZE = 25;

// STATS_IN_FLIGHT stats calls at most are sent at once.
const STATS_IN_FLIGHT = 4;

export async function queuesPage({ main, query, signal }) {
  document.title = 'Queues · Retsu';
  const prefix = query.get('prefix') ?? '';
  const after = query.get('after') ?? '';
  const table = h('table', { class: 'queues' },
    h('caption', { class: 'visually-hidden' }, 'Queues, with the counts of each priority'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Queue'), h('th', { scope: 'col' }, 'Priority'), headerCells())));
  const empty = h('p', { class: 'empty', hidden: true });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of queues' });
  main.append(
    h('h1', { tabindex: -1 }, 'Queues'),
    filterForm(prefix),
    h('div', { class: 'scroll' }, table),
    empty,
    pager,
    createForm(),
  );

  let rows = new Map(); // queue ID → its cells by priority
  let shown = null; // the queues in the table and whether more follow: rebuilt when they change
  every(REFRESH_MS, signal, async () => {
    const page = await listPage(prefix, after, signal);
    const listed = `${page.queues.map((q) => q.id).join()} ${page.more}`;
    if (listed !== shown) {
      shown = listed;
      rows = showQueues(table, page.queues);
      showPager(pager, prefix, after, page);
      empty.textContent = prefix === '' ? 'No queues yet: create one below.' : `No queue name starts with “${prefix}”.`;
      empty.hidden = page.queues.length > 0 || after !== '';
    }
    await eachLimited(page.queues, STATS_IN_FLIGHT, async (queue) => {
      const stats = await queueStats(queue.id, signal);
      if (stats !== null) record(queue.id, totals(stats));
      const entries = byPriority(stats);
      for (const priority of PRIORITIES) {
        fillCells(rows.get(queue.id)[priority], entries[priority], `/ui/queues/${id(queue.id)}/dead-letters`);
      }
    });
  });
}

// listPage returns up to PAGE_SIZE queues whose names start with prefix, after the name
// after, and whether more follow.
async function listPage(prefix, after, signal) {
  const query = new URLSearchParams({ limit: PAGE_SIZE + 1 });
  const cursor = after || cursorBefore(prefix);
  if (cursor !== '') query.set('after', cursor);
  const { queues } = await call('GET', `/v1/queues?${query}`, { signal });
  // Names are in byte order, so those with the prefix come together, first.
  const matching = queues.filter((q) => q.name.startsWith(prefix));
  return { queues: matching.slice(0, PAGE_SIZE), more: matching.length > PAGE_SIZE };
}

// cursorBefore returns the listing cursor (exclusive) after which the names that start with
// prefix come first: prefix with its last character one lower, then "~", which sorts after
// every character that a queue name may hold (a-z 0-9 . _ -). The API filters names only
// by equality, so a prefix is found this way, in one call.
function cursorBefore(prefix) {
  if (prefix === '') return '';
  const last = prefix.charCodeAt(prefix.length - 1);
  return `${prefix.slice(0, -1)}${String.fromCharCode(last - 1)}~`;
}

// queueStats returns a queue's stats, or null when the queue is gone since it was listed.
async function queueStats(queueId, signal) {
  try {
    return await call('GET', `/v1/queues/${id(queueId)}/stats`, { signal });
  } catch (err) {
    if (err.code === 'queue_not_found') return null;
    throw err;
  }
}

// showQueues replaces the table's rows with three a queue, one per priority, and returns
// their stats cells by queue ID and priority.
function showQueues(table, queues) {
  for (const body of table.querySelectorAll('tbody')) body.remove();
  const rows = new Map();
  for (const queue of queues) {
    const cells = {};
    const body = h('tbody', { 'data-queue': queue.name });
    PRIORITIES.forEach((priority, i) => {
      cells[priority] = statCells();
      body.append(h('tr', { 'data-priority': priority },
        i === 0 ? h('th', { scope: 'rowgroup', rowspan: PRIORITIES.length, class: 'name' },
          h('a', { href: `/ui/queues/${id(queue.id)}` }, queue.name)) : null,
        h('td', { class: 'priority' }, priority), cells[priority]));
    });
    table.append(body);
    rows.set(queue.id, cells);
  }
  return rows;
}

function showPager(pager, prefix, after, page) {
  const link = (cursor) => {
    const query = new URLSearchParams();
    if (prefix !== '') query.set('prefix', prefix);
    if (cursor !== '') query.set('after', cursor);
    return `/ui/${query.size > 0 ? `?${query}` : ''}`;
  };
  pager.replaceChildren(...[
    after !== '' ? h('a', { href: link('') }, '« First page') : null,
    page.more ? h('a', { href: link(page.queues.at(-1).name), rel: 'next' }, 'Next page »') : null,
  ].filter(Boolean));
}

// filterForm is a plain GET form: it works as a link would, and keeps the prefix in the
// address, where a bookmark finds it.
function filterForm(prefix) {
  const input = h('input', { id: 'prefix', name: 'prefix', type: 'search', value: prefix, autocomplete: 'off', spellcheck: 'false' });
  return h('form', {
    class: 'filter', role: 'search', action: '/ui/', method: 'get',
    onsubmit: (event) => {
      event.preventDefault();
      const value = input.value.trim();
      navigate(value === '' ? '/ui/' : `/ui/?${new URLSearchParams({ prefix: value })}`);
    },
  }, h('label', { for: 'prefix' }, 'Names starting with'), input, h('button', { type: 'submit' }, 'Filter'));
}

// createForm creates a queue; settings left empty take the server's defaults.
function createForm() {
  const name = h('input', { id: 'new-name', name: 'name', autocomplete: 'off', spellcheck: 'false' });
  const fields = settingsFields('new', {});
  const form = h('form', {
    class: 'settings', novalidate: true,
    onsubmit: async (event) => {
      event.preventDefault();
      const body = { name: name.value.trim(), ...fields.values() };
      const queue = await attempt(form, () => call('POST', '/v1/queues', { body }));
      if (queue) navigate(`/ui/queues/${id(queue.id)}`, `Created the queue ${queue.name}.`);
    },
  },
  h('div', { class: 'field' }, h('label', { for: 'new-name' }, 'Name'), name,
    h('small', {}, '1–64 of a-z 0-9 . _ -, starting and ending with a letter or digit')),
  fields.element,
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Create queue')));
  return h('details', { class: 'create' }, h('summary', {}, 'Create a queue'), form);
}
