// The dead letters of a queue (/ui/queues/{id}/dead-letters?after=): a page of them by ID
// (their enqueue order), each with a preview of its payload and the whole on demand, and
// redrive and delete, of those selected or of all, each confirmed first.

import { call, id } from '../api.js';
import { confirmAction } from '../confirm.js';
import { h, plural, time } from '../dom.js';
import { attempt, showDone } from '../notice.js';
import { eachLimited } from '../poll.js';
import { breadcrumbs, tabs } from './queue.js';

// PAGE_SIZE dead letters are shown at a time.
const PAGE_SIZE = 50;

// PREVIEW characters of a payload are shown in the list; the rest on demand.
const PREVIEW = 120;

export async function deadLettersPage({ main, params: [queueId], query, signal }) {
  const path = `/v1/queues/${id(queueId)}`;
  const queue = await call('GET', path, { signal });
  const after = query.get('after') ?? '';
  document.title = `Dead letters of ${queue.name} · Retsu`;

  const selectAll = h('input', { type: 'checkbox', 'aria-label': 'Select every dead letter of this page' });
  const table = h('table', { class: 'dead-letters' },
    h('caption', { class: 'visually-hidden' }, `Dead letters of ${queue.name}`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'select' }, selectAll),
      ['ID', 'Priority', 'Attempts', 'Enqueued (UTC)', 'Dead-lettered (UTC)', 'Payload'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody'));
  const empty = h('p', { class: 'empty', hidden: true }, after === '' ? 'No dead letters.' : 'No dead letters after this one.');
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of dead letters' });
  const toolbar = h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Dead-letter actions' });
  main.append(
    breadcrumbs(queue, queueId, h('span', { 'aria-current': 'page' }, 'Dead letters')),
    h('h1', { tabindex: -1 }, `Dead letters of ${queue.name}`),
    tabs(queueId, 'dead-letters'),
    toolbar,
    h('div', { class: 'scroll' }, table),
    empty,
    pager,
  );

  const selected = () => [...table.querySelectorAll('tbody input[type=checkbox]:checked')].map((box) => box.value);
  const load = async () => {
    const keep = new Set(selected());
    const list = new URLSearchParams({ limit: PAGE_SIZE + 1 });
    if (after !== '') list.set('after', after);
    const { dead_letters: letters } = await call('GET', `${path}/dead-letters?${list}`, { signal });
    const page = letters.slice(0, PAGE_SIZE);
    table.tBodies[0].replaceChildren(...page.flatMap((letter) => rows(queueId, letter, keep.has(letter.id))));
    empty.hidden = page.length > 0;
    selectAll.checked = false;
    pager.replaceChildren(...[
      after !== '' ? h('a', { href: `/ui/queues/${id(queueId)}/dead-letters` }, '« First page') : null,
      letters.length > PAGE_SIZE
        ? h('a', { href: `/ui/queues/${id(queueId)}/dead-letters?${new URLSearchParams({ after: page.at(-1).id })}`, rel: 'next' }, 'Next page »')
        : null,
    ].filter(Boolean));
    updateButtons();
  };

  const act = (label, message, request, done) => async () => {
    const ids = selected();
    if (!await confirmAction(message(ids), label)) return;
    const answer = await attempt(toolbar, () => request(ids));
    if (answer === undefined) return;
    showDone(done(answer, ids));
    await attempt(toolbar, load);
  };
  const redriveSelected = h('button', {
    type: 'button',
    onclick: act('Redrive', (ids) => `Redrive ${plural(ids.length, 'dead letter')} to ${queue.name}? ${REDRIVE}`,
      (ids) => call('POST', `${path}/dead-letters/redrive`, { body: { ids } }),
      (answer, ids) => `Redrove ${answer.redriven.length} of ${plural(ids.length, 'dead letter')}.`),
  }, 'Redrive selected');
  const deleteSelected = h('button', {
    type: 'button', class: 'danger',
    onclick: act('Delete', (ids) => `Delete ${plural(ids.length, 'dead letter')} of ${queue.name}? This cannot be undone.`,
      async (ids) => {
        // The API deletes dead letters one by one, or all at once.
        await eachLimited(ids, 4, (letterId) => call('DELETE', `${path}/dead-letters/${id(letterId)}`));
        return ids.length;
      },
      (deleted) => `Deleted ${plural(deleted, 'dead letter')}.`),
  }, 'Delete selected');
  const oldest = h('input', { id: 'redrive-count', type: 'number', inputmode: 'numeric', value: 10, step: 1, class: 'short' });
  const redriveOldest = h('button', {
    type: 'button',
    onclick: act('Redrive', () => `Redrive the ${oldest.value} oldest dead letters of ${queue.name}? ${REDRIVE}`,
      () => call('POST', `${path}/dead-letters/redrive`, { body: { limit: Number(oldest.value) } }),
      (answer) => `Redrove ${plural(answer.redriven.length, 'dead letter')}.`),
  }, 'Redrive oldest');
  const deleteAll = h('button', {
    type: 'button', class: 'danger',
    onclick: act('Delete all', () => `Delete every dead letter of ${queue.name}, on every page? This cannot be undone.`,
      () => call('DELETE', `${path}/dead-letters`),
      (answer) => `Deleted ${plural(answer.deleted, 'dead letter')}.`),
  }, 'Delete all…');
  const updateButtons = () => {
    const none = selected().length === 0;
    redriveSelected.disabled = none;
    deleteSelected.disabled = none;
  };
  toolbar.append(
    h('span', { class: 'group' }, redriveSelected, deleteSelected),
    h('span', { class: 'group' }, h('label', { for: 'redrive-count' }, 'Oldest'), oldest, redriveOldest),
    h('span', { class: 'group' }, deleteAll,
      h('button', { type: 'button', onclick: () => attempt(toolbar, load) }, 'Refresh')),
  );
  table.addEventListener('change', (event) => {
    if (event.target === selectAll) {
      for (const box of table.querySelectorAll('tbody input[type=checkbox]')) box.checked = selectAll.checked;
    }
    updateButtons();
  });
  await load();
}

// REDRIVE says what a redrive does, in its confirmation.
const REDRIVE = 'They go back to the end of their priority\'s line, with 0 delivery attempts and the queue\'s current settings.';

// rows returns a dead letter's row and the hidden row of its whole payload.
function rows(queueId, letter, checked) {
  const full = h('tr', { class: 'payload-row', hidden: true },
    h('td', { colspan: 7 }, h('pre', { class: 'payload' }, letter.payload)));
  const long = letter.payload.length > PREVIEW;
  const toggle = h('button', {
    type: 'button', class: 'link', 'aria-expanded': 'false',
    onclick: () => {
      full.hidden = !full.hidden;
      toggle.setAttribute('aria-expanded', String(!full.hidden));
      toggle.textContent = full.hidden ? 'Show all' : 'Hide';
    },
  }, 'Show all');
  const row = h('tr', { 'data-id': letter.id },
    h('td', { class: 'select' }, h('input', { type: 'checkbox', value: letter.id, checked, 'aria-label': `Select ${letter.id}` })),
    h('td', {}, h('a', { href: `/ui/queues/${id(queueId)}/dead-letters/${id(letter.id)}`, class: 'mono' }, letter.id)),
    h('td', {}, letter.priority),
    h('td', { class: 'num' }, letter.delivery_attempts),
    h('td', { class: 'when' }, time(letter.enqueued_at)),
    h('td', { class: 'when' }, time(letter.dead_lettered_at)),
    h('td', { class: 'preview' },
      h('code', {}, long ? `${letter.payload.slice(0, PREVIEW)}…` : letter.payload),
      ' ', h('small', {}, plural(letter.payload.length, 'character')), ' ', toggle));
  return [row, full];
}
