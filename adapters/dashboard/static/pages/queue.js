// The page of one queue (/ui/queues/{id}): its counts and backlog chart, refreshed every few
// seconds, its settings (editable), and purge and delete.

import { call, id } from '../api.js';
import { record, samplesOf } from '../backlog.js';
import { backlogChart } from '../chart.js';
import { confirmAction } from '../confirm.js';
import { duration, h, plural } from '../dom.js';
import { attempt, showDone } from '../notice.js';
import { every, REFRESH_MS } from '../poll.js';
import { navigate } from '../router.js';
import { byPriority, fillCells, headerCells, PRIORITIES, statCells, totals } from '../stats.js';

// SETTINGS are a queue's editable settings: member, label, and whether it is in seconds.
const SETTINGS = [
  ['visibility_timeout_seconds', 'Visibility timeout (seconds)', true],
  ['max_delivery_attempts', 'Maximum delivery attempts', false],
  ['default_message_ttl_seconds', 'Default message lifetime (seconds)', true],
];

export async function queuePage({ main, params: [queueId], signal }) {
  const path = `/v1/queues/${id(queueId)}`;
  let queue = await call('GET', path, { signal });
  document.title = `${queue.name} · Retsu`;

  const rows = Object.fromEntries([...PRIORITIES, 'total'].map((p) => [p, statCells()]));
  const table = h('table', { class: 'stats' },
    h('caption', { class: 'visually-hidden' }, `Counts of ${queue.name} by priority`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Priority'), headerCells())),
    h('tbody', {}, PRIORITIES.map((p) => h('tr', { 'data-priority': p }, h('th', { scope: 'row' }, p), rows[p]))),
    h('tfoot', {}, h('tr', { 'data-priority': 'total' }, h('th', { scope: 'row' }, 'All'), rows.total)));
  const chart = backlogChart();

  main.append(
    breadcrumbs(queue, queueId),
    h('h1', { tabindex: -1 }, queue.name),
    h('p', { class: 'id' }, 'ID ', h('code', {}, queueId)),
    tabs(queueId, 'overview'),
    h('section', { 'aria-labelledby': 'backlog-title' },
      h('h2', { id: 'backlog-title' }, 'Backlog'), chart.element, h('div', { class: 'scroll' }, table)),
    settingsSection(queue, path, (updated) => { queue = updated; }),
    manageSection(() => queue, path, () => refresh.now()),
  );
  chart.draw(samplesOf(queueId)); // what the tab polled before, until the first answer

  const deadLink = `/ui/queues/${id(queueId)}/dead-letters`;
  const refresh = every(REFRESH_MS, signal, async () => {
    const stats = await call('GET', `${path}/stats`, { signal });
    const sum = totals(stats);
    record(queueId, sum);
    const entries = byPriority(stats);
    for (const p of PRIORITIES) fillCells(rows[p], entries[p], deadLink);
    fillCells(rows.total, sum, deadLink);
    chart.draw(samplesOf(queueId));
  });
}

// breadcrumbs returns the trail from the list of queues to the queue.
export function breadcrumbs(queue, queueId, ...more) {
  return h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumbs' },
    h('a', { href: '/ui/' }, 'Queues'), ' › ',
    more.length === 0 ? h('span', { 'aria-current': 'page' }, queue.name) : h('a', { href: `/ui/queues/${id(queueId)}` }, queue.name),
    more.flatMap((m) => [' › ', m]));
}

// tabs returns the links between a queue's overview and its dead letters.
export function tabs(queueId, current) {
  const tab = (name, href, label) => h('a', { href, 'aria-current': current === name ? 'page' : null }, label);
  return h('nav', { class: 'tabs', 'aria-label': 'Queue' },
    tab('overview', `/ui/queues/${id(queueId)}`, 'Overview'),
    tab('dead-letters', `/ui/queues/${id(queueId)}/dead-letters`, 'Dead letters'));
}

// settingsFields returns the inputs of a queue's settings, filled from values, and values(),
// which returns those that hold a number. The inputs check nothing themselves (novalidate on
// their forms): the API's own sentence says what is wrong with a value.
export function settingsFields(prefix, values) {
  const inputs = {};
  const element = h('div', { class: 'fields' }, SETTINGS.map(([member, label, seconds]) => {
    const input = h('input', {
      id: `${prefix}-${member}`, name: member, type: 'number', inputmode: 'numeric', step: 1,
      value: values[member] ?? '', placeholder: values[member] === undefined ? 'server default' : null,
    });
    inputs[member] = input;
    const hint = h('small', { 'aria-live': 'polite' });
    const explain = () => { hint.textContent = seconds && input.value !== '' ? duration(Number(input.value)) : ''; };
    input.addEventListener('input', explain);
    explain();
    return h('div', { class: 'field' }, h('label', { for: input.id }, label), input, hint);
  }));
  const valuesOf = () => Object.fromEntries(Object.entries(inputs)
    .filter(([, input]) => input.value.trim() !== '')
    .map(([member, input]) => [member, Number(input.value)]));
  return { element, values: valuesOf };
}

// settingsSection edits the queue's settings with PATCH, sending only those that changed.
function settingsSection(queue, path, updated) {
  const fields = settingsFields('edit', queue);
  const form = h('form', {
    class: 'settings', novalidate: true,
    onsubmit: async (event) => {
      event.preventDefault();
      const changes = Object.fromEntries(Object.entries(fields.values()).filter(([m, v]) => queue[m] !== v));
      if (Object.keys(changes).length === 0) {
        showDone('No setting changed.');
        return;
      }
      const answer = await attempt(form, () => call('PATCH', path, { body: changes }));
      if (answer) {
        queue = answer;
        updated(answer);
        showDone(`Saved the settings of ${answer.name}. Messages enqueued from now on use them.`);
      }
    },
  }, fields.element, h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Save settings')));
  return h('section', { 'aria-labelledby': 'settings-title' }, h('h2', { id: 'settings-title' }, 'Settings'), form);
}

// manageSection purges the queue's messages or deletes the queue, each confirmed first.
function manageSection(queue, path, refresh) {
  const section = h('section', { 'aria-labelledby': 'manage-title' }, h('h2', { id: 'manage-title' }, 'Manage'));
  const purge = async () => {
    const { name } = queue();
    if (!await confirmAction(`Remove every message of ${name}: ready, delayed and in flight? Its dead letters stay.`, 'Purge messages')) return;
    const answer = await attempt(section, () => call('DELETE', `${path}/messages`));
    if (answer) {
      showDone(`Removed ${plural(answer.deleted, 'message')} from ${name}.`);
      refresh();
    }
  };
  const remove = async () => {
    const { name } = queue();
    if (!await confirmAction(`Delete the queue ${name}, with its messages and dead letters? This cannot be undone.`, 'Delete queue')) return;
    if (await attempt(section, () => call('DELETE', path)) !== undefined) navigate('/ui/', `Deleted the queue ${name}.`);
  };
  section.append(h('div', { class: 'actions' },
    h('button', { type: 'button', class: 'danger', onclick: purge }, 'Purge messages…'),
    h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete queue…')));
  return section;
}
