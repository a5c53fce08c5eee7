/** The inspector page: the token from the URL fragment, the identity bar, the views, the live feed, export and import. */
import { admin, log, readSse, sessionLog, state, type RawRequest } from './a2a.js';
import { field, h, select, show } from './dom.js';
import { cardView } from './views/card.js';
import { chatView } from './views/chat.js';
import { consoleView } from './views/console.js';
import { eventsView } from './views/events.js';
import { tasksView } from './views/tasks.js';

// The fragment never reaches a server log; it is moved to this tab's storage and out of the address bar.
const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
if (fromHash) {
  sessionStorage.setItem('a2a-inspector-token', fromHash);
  history.replaceState(null, '', location.pathname);
}
state.token = sessionStorage.getItem('a2a-inspector-token') ?? '';
// A token pasted into the address bar of an open page is a same-document navigation: start again with it.
addEventListener('hashchange', () => location.reload());

/** The identity the chat, console and task actions send as: anonymous, a pasted bearer token, or a scheme of the card. */
function identityBar(): { element: HTMLElement; refresh(): void } {
  const kind = select(['anonymous', 'bearer token'], 'anonymous', { id: 'identity-kind' });
  const value = h('input', { id: 'identity-value', placeholder: 'credential', type: 'password' });
  const apply = () => {
    const scheme = ((state.card?.securitySchemes as Record<string, Record<string, Record<string, string>>>) ?? {})[kind.value];
    const apiKey = scheme?.apiKeySecurityScheme;
    if (kind.value === 'anonymous') state.identity = { kind: 'anonymous' };
    else if (apiKey && (apiKey.location ?? 'header').toLowerCase().includes('header'))
      state.identity = { kind: 'header', header: apiKey.name, value: value.value };
    else state.identity = { kind: 'bearer', value: value.value };
  };
  kind.addEventListener('change', apply);
  value.addEventListener('input', apply);
  return {
    element: h('div', { class: 'identity' }, field('Identity', kind), value),
    refresh() {
      const schemes = Object.keys((state.card?.securitySchemes as object | undefined) ?? {});
      const chosen = kind.value;
      const options = ['anonymous', 'bearer token', ...schemes];
      show(
        kind,
        options.map((o) => h('option', { value: o }, o)),
      );
      // A reloaded card keeps the identity chosen, when it still offers it.
      if (options.includes(chosen)) kind.value = chosen;
      apply();
    },
  };
}

function exportSession(): void {
  const blob = new Blob(
    [JSON.stringify({ format: 'a2a-inspector-session', version: 1, exportedAt: new Date().toISOString(), entries: sessionLog }, null, 2)],
    {
      type: 'application/json',
    },
  );
  const link = h('a', { href: URL.createObjectURL(blob), download: 'a2a-inspector-session.json' });
  link.click();
}

async function main(): Promise<void> {
  const root = document.body;
  if (!state.token) {
    show(root, h('p', { class: 'bad' }, 'Open the inspector with the URL from the server log (it carries #token=…).'));
    return;
  }
  const session = await admin<{ agentUrl: string; receiverUrl: string }>('session');
  state.agentUrl = session.agentUrl;
  state.receiverUrl = session.receiverUrl;
  const identity = identityBar();
  const tasks = tasksView();
  const events = eventsView();
  const raw = consoleView();
  const views: Record<string, HTMLElement> = {
    Card: cardView(() => identity.refresh()),
    Chat: chatView(),
    Console: raw.element,
    Tasks: tasks.element,
    'Events & push': events.element,
  };
  const main = h('main', {});
  const status = h('span', { id: 'session-status' });
  const importer = h('input', { type: 'file', id: 'session-import', accept: 'application/json', hidden: true });
  importer.addEventListener('change', () => {
    const file = importer.files?.[0];
    if (!file) return;
    void file.text().then((text) => {
      const imported = JSON.parse(text) as { entries: typeof sessionLog };
      sessionLog.splice(0, sessionLog.length, ...imported.entries);
      raw.load(imported.entries.filter((e) => e.kind === 'request').map((e) => e.data as RawRequest));
      show(status, `Imported ${imported.entries.length} entries: replay them from the console's history`);
      select('Console');
    });
  });
  const tabs = Object.keys(views).map((name) => h('button', { class: 'tab', 'data-view': name, onclick: () => select(name) }, name));
  const select = (name: string) => {
    for (const tab of tabs) tab.classList.toggle('active', tab.dataset.view === name);
    show(main, views[name]);
  };
  show(
    root,
    h(
      'header',
      {},
      h('h1', {}, 'A2A inspector'),
      h('nav', {}, tabs),
      identity.element,
      h('button', { id: 'session-export', onclick: exportSession }, 'Export'),
      h('button', { id: 'session-import-button', onclick: () => importer.click() }, 'Import'),
      importer,
      status,
    ),
    main,
  );
  select('Card');
  // The live feed: fetch rather than EventSource, which cannot send the token header. A dropped
  // connection is resumed after the last entry seen.
  let after = 0;
  for (;;) {
    try {
      const response = await fetch(`api/events?after=${after}`, { headers: { 'x-inspector-token': state.token } });
      if (!response.ok) throw new Error(`events: HTTP ${response.status}`);
      document.body.dataset.live = 'true';
      await readSse(response, (data) => {
        const entry = data as Parameters<typeof tasks.onEntry>[0];
        after = entry.seq;
        log('event', entry);
        tasks.onEntry(entry);
        events.onEntry(entry);
      });
    } catch {
      // the server went away or restarted: try again below
    }
    document.body.dataset.live = 'false';
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

void main().catch((error: unknown) => show(document.body, h('p', { class: 'bad' }, String(error))));
