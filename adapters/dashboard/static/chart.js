// The backlog chart of the queue page: one line per count over the last minutes, drawn as an
// SVG by this module (no library, nothing fetched), from the samples of backlog.js.

import { WINDOW_MS } from './backlog.js';
import { count, h, s } from './dom.js';

// SERIES are the lines drawn: the member of the totals, its label and its CSS class, which
// gives each line its colour and dash pattern (told apart without colour too).
const SERIES = [
  ['ready', 'Ready', 'ready'],
  ['delayed', 'Delayed', 'delayed'],
  ['in_flight', 'In flight', 'in-flight'],
  ['dead_lettered', 'Dead letters', 'dead'],
];

// HEIGHT is the chart's height in CSS pixels; its width is that of its box, read at every
// drawing, so that one unit of the drawing is one pixel and the labels keep their size in a
// wide window and a narrow one.
const HEIGHT = 180;
const MIN_WIDTH = 280;
const MARGIN = { left: 48, right: 10, top: 10, bottom: 26 };

// backlogChart returns the chart's element and draw(samples), which redraws it.
export function backlogChart() {
  const svg = s('svg', { class: 'chart', role: 'img', 'aria-labelledby': 'chart-title chart-desc' });
  const legend = h('ul', { class: 'legend' });
  const element = h('figure', { class: 'backlog' }, svg, h('figcaption', {}, legend));
  const draw = (samples, now = Date.now()) => {
    const width = Math.max(MIN_WIDTH, Math.round(svg.getBoundingClientRect().width));
    svg.setAttribute('viewBox', `0 0 ${width} ${HEIGHT}`);
    svg.replaceChildren(...drawing(samples, now, width));
    const latest = samples.at(-1) ?? {};
    legend.replaceChildren(...SERIES.map(([member, label, cls]) => h('li', { class: cls },
      h('span', { class: 'swatch', 'aria-hidden': 'true' }), `${label} `, h('strong', {}, count(latest[member])))));
  };
  return { element, draw };
}

// drawing returns the SVG children for the samples, as of now, width units wide. The time
// axis spans the whole minutes since the oldest sample, up to WINDOW_MS, so that a chart
// fills its width from its first minute on.
function drawing(samples, now, width) {
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const minutes = Math.min(WINDOW_MS / 60000, Math.max(1, Math.ceil((now - (samples[0]?.at ?? now)) / 60000)));
  const span = minutes * 60000;
  const drawn = SERIES.filter(([member]) => samples.some((p) => p[member] !== undefined));
  const top = niceCeiling(Math.max(1, ...samples.flatMap((p) => drawn.map(([m]) => p[m] ?? 0))));
  const x = (at) => MARGIN.left + ((at - (now - span)) / span) * plotWidth;
  const y = (n) => MARGIN.top + plotHeight - (n / top) * plotHeight;
  const latest = samples.at(-1);

  const children = [
    s('title', { id: 'chart-title' }, `Backlog over the last ${minutes === 1 ? 'minute' : `${minutes} minutes`}`),
    s('desc', { id: 'chart-desc' }, latest
      ? drawn.map(([m, label]) => `${label}: ${count(latest[m])}`).join(', ')
      : 'No counts yet: the page adds one every few seconds.'),
  ];
  for (const n of [0, top / 2, top].filter(Number.isInteger)) {
    children.push(s('line', { class: 'grid', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(n), y2: y(n) }));
    children.push(s('text', { class: 'axis', x: MARGIN.left - 6, y: y(n) + 4, 'text-anchor': 'end' }, count(n)));
  }
  const ticks = [[0, `${minutes} min ago`], [1, 'now']];
  if (minutes % 2 === 0) ticks.push([0.5, `${minutes / 2} min ago`]);
  for (const [fraction, label] of ticks) {
    const anchor = fraction === 0 ? 'start' : fraction === 1 ? 'end' : 'middle';
    children.push(s('text', { class: 'axis', x: MARGIN.left + fraction * plotWidth, y: HEIGHT - 6, 'text-anchor': anchor }, label));
  }
  for (const [member, , cls] of drawn) {
    const points = samples.filter((p) => p[member] !== undefined).map((p) => `${x(p.at).toFixed(1)},${y(p[member]).toFixed(1)}`);
    children.push(s('polyline', { class: `line ${cls}`, points: points.join(' ') }));
    // The latest point as a dot, so that a single sample shows too.
    if (latest?.[member] !== undefined) {
      children.push(s('circle', { class: `dot ${cls}`, cx: x(latest.at), cy: y(latest[member]), r: 3 }));
    }
  }
  return children;
}

// niceCeiling returns the smallest of 1, 2 or 5 times a power of ten that is at least n, so
// that the axis reads in round numbers.
function niceCeiling(n) {
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= n);
}
