// History-API routing: every page has an address of its own under /ui/ (the server answers
// index.html for all of them), reached by ordinary links. A click on a link of the dashboard
// changes the address without reloading, and the page of the new address is shown; Back,
// Forward, a reload or a bookmark show the same page.

import { h } from './dom.js';
import { clearNotice, showDone, tokenButton } from './notice.js';
import { deadLetterPage } from './pages/dead-letter.js';
import { deadLettersPage } from './pages/dead-letters.js';
import { queuePage } from './pages/queue.js';
import { queuesPage } from './pages/queues.js';

// routes match the path in order; their groups are the page's parameters.
const routes = [
  [/^\/ui\/$/, queuesPage],
  [/^\/ui\/queues\/([^/]+)$/, queuePage],
  [/^\/ui\/queues\/([^/]+)\/dead-letters$/, deadLettersPage],
  [/^\/ui\/queues\/([^/]+)\/dead-letters\/([^/]+)$/, deadLetterPage],
];

let leave = null; // aborts the page shown: its refreshes and its calls in flight
let shown = null; // the path and query of the page shown

// start shows the page of the address, and then that of every link followed.
export function start() {
  document.addEventListener('click', followLink);
  // A fragment link (Skip to content) also fires popstate: only a new page is shown.
  window.addEventListener('popstate', () => {
    if (location.pathname + location.search !== shown) show();
  });
  show();
}

// navigate shows the page of url, a path under /ui/, as a new history entry; flash is shown
// on it, to say what the action that led there did.
export function navigate(url, flash) {
  history.pushState(null, '', url);
  show({ flash, focus: true });
}

// reload shows the current page again, from the API.
export function reload() {
  show({ focus: true });
}

function followLink(event) {
  const link = event.target.closest('a[href]');
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey
    || event.shiftKey || event.altKey || link.target || link.hasAttribute('download')) return;
  const url = new URL(link.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui/')
    || (url.hash !== '' && url.pathname === location.pathname)) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}

async function show({ flash, focus = false } = {}) {
  leave?.abort();
  const controller = new AbortController();
  leave = controller;
  shown = location.pathname + location.search;
  clearNotice();
  const main = document.getElementById('main');
  main.replaceChildren();
  const [page, params] = match(location.pathname);
  try {
    await page({ main, params, query: new URLSearchParams(location.search), signal: controller.signal });
    if (flash) showDone(flash);
  } catch (err) {
    if (controller.signal.aborted) return;
    document.title = 'Retsu';
    main.replaceChildren(h('h1', { tabindex: -1 }, 'This page could not be shown'),
      h('p', { class: 'problem' }, err.message, ' ', err.status === 401 ? tokenButton() : null),
      h('p', {}, h('a', { href: '/ui/' }, 'All queues')));
  }
  // After a link, the keyboard and screen readers start from the new page's heading.
  if (focus) main.querySelector('h1')?.focus();
}

function match(path) {
  for (const [pattern, page] of routes) {
    const found = pattern.exec(path);
    if (found) return [page, found.slice(1).map(decode)];
  }
  return [notFound, []];
}

// decode returns a path segment decoded, or as it is when it is not well formed: the API
// then says what is wrong with it.
function decode(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function notFound({ main }) {
  document.title = 'Not found · Retsu';
  main.append(h('h1', { tabindex: -1 }, 'No such page'),
    h('p', {}, 'The dashboard has no page at this address. ', h('a', { href: '/ui/' }, 'All queues')));
}
