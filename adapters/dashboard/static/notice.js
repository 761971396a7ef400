// The notice under the header: the last error (the API's own sentence) or the last thing
// done. It is an ARIA alert, so screen readers read it out, and it stays in view while the
// page scrolls, next to whatever button the operator pressed.

import { h } from './dom.js';

const element = () => document.getElementById('notice');

// TOKEN_EVENT is dispatched on document by tokenButton; app.js answers it.
export const TOKEN_EVENT = 'retsu:token';

// showError shows err's message: for an ApiError, the detail of the API's problem document.
// A 401 comes with a button to enter a token, since the operator may have cancelled.
export function showError(err) {
  show('error', err.message || String(err), err.status === 401 ? tokenButton() : null);
}

// tokenButton returns a button that opens the token prompt again and shows the page anew.
export function tokenButton() {
  return h('button', { type: 'button', onclick: () => document.dispatchEvent(new Event(TOKEN_EVENT)) }, 'Enter a token');
}

// showDone confirms what an action did.
export function showDone(text) {
  show('done', text);
}

export function clearNotice() {
  const notice = element();
  notice.hidden = true;
  notice.replaceChildren();
}

function show(kind, text, action) {
  const notice = element();
  notice.className = `notice ${kind}`;
  notice.replaceChildren(...[h('span', {}, text), action,
    h('button', { type: 'button', class: 'quiet', 'aria-label': 'Dismiss', onclick: clearNotice }, '×')].filter(Boolean));
  notice.hidden = false;
}

// attempt runs action with the buttons of container disabled (no double submission), shows
// its error, and returns its result, or undefined when it failed.
export async function attempt(container, action) {
  const buttons = [...container.querySelectorAll('button')].filter((b) => !b.disabled);
  buttons.forEach((b) => { b.disabled = true; });
  try {
    return await action();
  } catch (err) {
    showError(err);
    return undefined;
  } finally {
    buttons.forEach((b) => { b.disabled = false; });
  }
}
