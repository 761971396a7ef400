// Element building and formatting shared by the pages.
//
// Everything the API sends (queue names, payloads, its sentences) reaches the page through
// h(), which makes text nodes of strings: it is shown as text, never parsed as markup, so a
// payload of <script> is harmless. Nothing in the dashboard hands a string to an HTML
// parser (the package's tests check it), and the Content-Security-Policy's Trusted Types
// make such a call fail if one ever appeared.

const SVG = 'http://www.w3.org/2000/svg';

// h returns a new element with attrs (on* keys are event listeners, true is an empty
// attribute, false, null and undefined leave it out) and children (strings become text).
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s is h for SVG elements.
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

function build(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs)) {
    if (name.startsWith('on')) {
      element.addEventListener(name.slice(2), value);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else if (value !== false && value !== null && value !== undefined) {
      element.setAttribute(name, String(value));
    }
  }
  element.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : String(c))));
  return element;
}

const integer = new Intl.NumberFormat('en-US');

// count formats a number of messages; the API may not know one yet (undefined: "—").
export function count(n) {
  return n === undefined || n === null ? '—' : integer.format(n);
}

const UNITS = [['d', 86400], ['h', 3600], ['min', 60], ['s', 1]];

// duration formats whole seconds in their two largest units, such as "3 min 12 s" or "7 d".
export function duration(seconds) {
  if (!Number.isFinite(seconds)) return '—';
  let rest = Math.max(0, Math.round(seconds));
  if (rest === 0) return '0 s';
  const parts = [];
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    rest %= size;
    if (parts.length > 0 || n > 0) parts.push([n, unit]);
    if (parts.length === 2) break;
  }
  return parts.filter(([n]) => n > 0).map(([n, unit]) => `${n} ${unit}`).join(' ');
}

// time formats an RFC 3339 time of the API in UTC, to the second, as operators' logs do;
// the label or the column heading says UTC.
export function time(iso) {
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? String(iso) : t.toISOString().slice(0, 19).replace('T', ' ');
}

// plural returns "1 message" or "3 messages".
export function plural(n, one, many = `${one}s`) {
  return `${integer.format(n)} ${n === 1 ? one : many}`;
}
