// One dead letter (/ui/queues/{id}/dead-letters/{message_id}): its whole payload and
// details, to link to from a ticket, with redrive and delete, each confirmed first.

import { call, id } from '../api.js';
import { confirmAction } from '../confirm.js';
import { h, plural, time } from '../dom.js';
import { attempt } from '../notice.js';
import { navigate } from '../router.js';
import { breadcrumbs, tabs } from './queue.js';

export async function deadLetterPage({ main, params: [queueId, letterId], signal }) {
  const path = `/v1/queues/${id(queueId)}`;
  const [queue, letter] = await Promise.all([
    call('GET', path, { signal }),
    call('GET', `${path}/dead-letters/${id(letterId)}`, { signal }),
  ]);
  const list = `/ui/queues/${id(queueId)}/dead-letters`;
  document.title = `Dead letter ${letter.id} · Retsu`;

  const actions = h('div', { class: 'actions' });
  const redrive = async () => {
    if (!await confirmAction(`Redrive this dead letter to ${queue.name}? It goes back to the end of its priority's line, with 0 delivery attempts.`, 'Redrive')) return;
    const answer = await attempt(actions, () => call('POST', `${path}/dead-letters/redrive`, { body: { ids: [letter.id] } }));
    if (answer) navigate(list, answer.redriven.length === 1 ? `Redrove ${letter.id}.` : `${letter.id} was no longer a dead letter.`);
  };
  const remove = async () => {
    if (!await confirmAction(`Delete this dead letter of ${queue.name}? This cannot be undone.`, 'Delete')) return;
    if (await attempt(actions, () => call('DELETE', `${path}/dead-letters/${id(letter.id)}`)) !== undefined) {
      navigate(list, `Deleted ${letter.id}.`);
    }
  };
  actions.append(
    h('button', { type: 'button', class: 'primary', onclick: redrive }, 'Redrive…'),
    h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete…'));

  main.append(
    breadcrumbs(queue, queueId, h('a', { href: list }, 'Dead letters'), h('span', { 'aria-current': 'page' }, letter.id)),
    h('h1', { tabindex: -1 }, 'Dead letter'),
    tabs(queueId, 'dead-letters'),
    h('dl', { class: 'details' },
      h('dt', {}, 'ID'), h('dd', {}, h('code', {}, letter.id)),
      h('dt', {}, 'Priority'), h('dd', {}, letter.priority),
      h('dt', {}, 'Delivery attempts'), h('dd', {}, letter.delivery_attempts),
      h('dt', {}, 'Enqueued'), h('dd', {}, `${time(letter.enqueued_at)} UTC`),
      h('dt', {}, 'Dead-lettered'), h('dd', {}, `${time(letter.dead_lettered_at)} UTC`)),
    actions,
    h('h2', {}, `Payload (${plural(letter.payload.length, 'character')})`),
    h('pre', { class: 'payload' }, letter.payload),
  );
}
