// The API token. It lives in sessionStorage, so that it belongs to this tab and is gone when
// the tab closes, and api.js sends it only in the Authorization header, never in a cookie: a
// request that another site makes the browser send carries no token, and fails.

const KEY = 'retsu.token';

// pending is the open prompt, which every call that meets a 401 meanwhile waits for, so
// that a page of parallel calls asks once.
let pending = null;
// declined is set when the operator cancels the prompt: calls then fail at once, instead of
// asking again at every refresh, until allowAsking.
let declined = false;

export function token() {
  return sessionStorage.getItem(KEY);
}

export function forgetToken() {
  sessionStorage.removeItem(KEY);
  showForgetButton();
}

// allowAsking lets the next 401 open the prompt again after a cancel.
export function allowAsking() {
  declined = false;
}

// askForToken shows the token dialog with the API's reason and resolves with the token
// entered, or null when the operator cancels.
export function askForToken(reason) {
  if (declined) return Promise.resolve(null);
  pending ??= prompt(reason).finally(() => { pending = null; });
  return pending;
}

function prompt(reason) {
  const dialog = document.getElementById('token-dialog');
  const input = document.getElementById('token-input');
  document.getElementById('token-reason').textContent = reason;
  input.value = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      const entered = input.value.trim();
      input.value = '';
      if (dialog.returnValue === 'use' && entered !== '') {
        sessionStorage.setItem(KEY, entered);
        showForgetButton();
        resolve(entered);
      } else {
        declined = true;
        resolve(null);
      }
    }, { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

// showForgetButton shows "Forget token" while the tab holds one.
export function showForgetButton() {
  document.getElementById('token-forget').hidden = token() === null;
}
