/**
 * The view's one script, served at /live.js: on the fleet page it follows /live (server-sent
 * events) and writes each node's progress into its row and the live list, as text only.
 * Without it (or without JavaScript) every page still reads whole.
 */
export const LIVE_SCRIPT = `'use strict';
(() => {
  const log = document.getElementById('live-log');
  const state = document.getElementById('live-state');
  if (!log || !state || !window.EventSource) return;
  const source = new EventSource('/live');
  const mark = (node, kind, words) => {
    for (const cell of document.querySelectorAll('td.now')) {
      if (cell.dataset.node !== node) continue;
      cell.className = 'now ' + kind;
      const span = document.createElement('span');
      span.className = 'mark';
      span.textContent = words;
      cell.replaceChildren(span);
    }
  };
  const say = (text) => {
    const item = document.createElement('li');
    item.textContent = text;
    log.prepend(item);
    while (log.children.length > 50) log.lastElementChild.remove();
  };
  source.addEventListener('hello', () => {
    state.textContent = 'Following acts on this store, by any berth, as they happen.';
  });
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    if (event.kind === 'acting') {
      mark(event.node, 'acting', event.act + '…');
      say(event.node + ': ' + event.act + ' under way (' + event.by + ', since ' + event.since + ')');
    } else if (event.kind === 'ended') {
      mark(event.node, event.outcome, event.outcome);
      say(event.node + ': ' + event.act + (event.module ? ' ' + event.module : '') + ' by ' + event.actor + ': ' + event.outcome + (event.words ? ': ' + event.words : ''));
      state.textContent = 'Acts have changed the fleet since these surveys: survey again to see it now.';
    } else if (event.kind === 'let-go') {
      mark(event.node, '', '—');
    }
  };
  source.onerror = () => {
    state.textContent = 'Lost touch with berth view; trying again…';
  };
})();
`;
