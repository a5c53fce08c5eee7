/** Card view: the card as v1.0 and v0.3 clients get it, the kit's checks, the extended card. */
import { admin, buildRequest, send, state } from '../a2a.js';
import { h, jsonTree, show } from '../dom.js';

interface Check {
  name: string;
  ok: boolean | 'info';
  detail: string;
}

async function fetchCard(version: '1.0' | undefined): Promise<Record<string, unknown>> {
  const response = await fetch(`${state.agentUrl}/.well-known/agent-card.json`, { headers: version ? { 'a2a-version': version } : {} });
  return (await response.json()) as Record<string, unknown>;
}

export function cardView(onCard: () => void): HTMLElement {
  const root = h('section', { class: 'view', id: 'card-view' });
  const extended = h('div', { class: 'panel' });
  const load = async () => {
    show(root, h('p', {}, 'Loading the card…'));
    const [v1, v03] = await Promise.all([fetchCard('1.0'), fetchCard(undefined)]);
    state.card = v1;
    onCard();
    const checks = await admin<Check[]>('card-check', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ v1, v03 }),
    });
    const getExtended = async () => {
      const answer = await send(buildRequest('GetExtendedAgentCard', {}, 'JSON-RPC', '1.0'));
      show(extended, h('h3', {}, `Extended card (HTTP ${answer.status})`), jsonTree(answer.body));
    };
    show(
      root,
      h(
        'div',
        { class: 'panel' },
        h('h2', {}, `${String(v1.name)} `, h('small', {}, String(v1.description ?? ''))),
        h(
          'ul',
          { class: 'checks', id: 'card-checks' },
          checks.map((c) =>
            h(
              'li',
              { class: c.ok === true ? 'ok' : c.ok === false ? 'bad' : 'info' },
              h('b', {}, `${c.ok === true ? '✔' : c.ok === false ? '✘' : 'ℹ'} ${c.name}`),
              ' ',
              c.detail,
            ),
          ),
        ),
        h('button', { onclick: () => void load() }, 'Reload'),
        ' ',
        h(
          'button',
          { onclick: () => void getExtended(), disabled: !(v1.capabilities as Record<string, unknown> | undefined)?.extendedAgentCard },
          'Get the extended card with the chosen identity',
        ),
      ),
      h(
        'div',
        { class: 'columns' },
        h('div', { class: 'panel' }, h('h3', {}, 'As a v1.0 client gets it'), jsonTree(v1)),
        h('div', { class: 'panel' }, h('h3', {}, 'As a v0.3 client gets it'), jsonTree(v03)),
      ),
      extended,
    );
  };
  void load().catch((error: unknown) => show(root, h('p', { class: 'bad' }, String(error))));
  return root;
}
