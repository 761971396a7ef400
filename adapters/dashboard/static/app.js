// The dashboard's entry point: the token button, then the page of the address.

import { TOKEN_EVENT } from './notice.js';
import { reload, start } from './router.js';
import { allowAsking, forgetToken, showForgetButton } from './token.js';

// Forgetting the token shows the page again, which then asks for one if the server needs it.
document.getElementById('token-forget').addEventListener('click', () => {
  forgetToken();
  allowAsking();
  reload();
});
document.addEventListener(TOKEN_EVENT, () => {
  allowAsking();
  reload();
});
showForgetButton();
start();
