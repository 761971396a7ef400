// Calls to Retsu's HTTP API, on the origin that served the page.

import { askForToken, forgetToken, token } from './token.js';

// ApiError is a call that failed; its message is the problem document's detail, the API's
// own sentence, and code its stable code.
export class ApiError extends Error {
  constructor(status, code, detail) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

// call sends one request and returns its JSON answer, or null for 204. A 401 opens the
// token prompt and, once a token is entered, sends the request again with it; any other
// failure throws an ApiError.
export async function call(method, path, { body, signal } = {}) {
  for (;;) {
    const sent = token();
    const answer = await send(method, path, body, sent, signal);
    if (answer.status === 401) {
      const problem = await readProblem(answer);
      if (token() !== sent) continue; // another call got a new token meanwhile
      if (sent !== null) forgetToken();
      const reason = sent === null ? problem.message : `The server refused the token: ${problem.message}`;
      if (await askForToken(reason) === null) throw problem;
      continue;
    }
    if (!answer.ok) throw await readProblem(answer);
    return answer.status === 204 ? null : answer.json();
  }
}

async function send(method, path, body, bearer, signal) {
  const headers = { Accept: 'application/json' };
  if (bearer !== null) headers.Authorization = `Bearer ${bearer}`;
  // No cookie is sent or wanted (credentials: omit), and no answer comes from a cache.
  const init = { method, headers, signal, credentials: 'omit', cache: 'no-store', redirect: 'error' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(path, init);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiError(0, 'unreachable', `The server did not answer: ${err.message}.`);
  }
}

// readProblem turns an error answer into an ApiError with the problem document's detail.
async function readProblem(answer) {
  if ((answer.headers.get('Content-Type') ?? '').startsWith('application/problem+json')) {
    try {
      const problem = await answer.json();
      return new ApiError(answer.status, problem.code, problem.detail ?? problem.title);
    } catch {
      // An unreadable problem document is answered like any other body below.
    }
  }
  return new ApiError(answer.status, 'unexpected', `The server answered ${answer.status} ${answer.statusText}.`);
}

// id makes a path segment of an ID from the page's address, so that it cannot add segments
// of its own; the API checks that it is a UUID.
export function id(value) {
  return encodeURIComponent(value);
}
