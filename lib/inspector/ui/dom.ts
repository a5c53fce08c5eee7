/**
 * The UI's one DOM helper: elements built from tag, attributes and children, where a string child
 * is always a text node. Nothing in the UI assigns HTML, so agent content can never become markup.
 */
export type Child = Node | string | number | false | null | undefined | Child[];
type Attrs = Record<string, string | boolean | number | ((event: Event) => void) | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name === 'value') (element as HTMLInputElement).value = String(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what `parent` shows. */
export function show(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A JSON value as a collapsible tree (objects and arrays open two levels deep). */
export function jsonTree(value: unknown, depth = 0): Node {
  if (value === null || typeof value !== 'object')
    return h('span', { class: `json-${value === null ? 'null' : typeof value}` }, JSON.stringify(value));
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
  const open = Array.isArray(value) ? '[' : '{';
  const close = Array.isArray(value) ? ']' : '}';
  if (entries.length === 0) return h('span', {}, open + close);
  return h(
    'details',
    { class: 'json', open: depth < 2 },
    h('summary', {}, `${open} ${entries.length} ${Array.isArray(value) ? 'items' : 'keys'} ${close}`),
    entries.map(([key, v]) => h('div', { class: 'json-row' }, h('span', { class: 'json-key' }, key + ': '), jsonTree(v, depth + 1))),
  );
}

/** A labelled form control row. */
export const field = (label: string, control: Node) => h('label', { class: 'field' }, h('span', {}, label), control);

export function select(options: readonly string[], value: string, attrs: Attrs = {}): HTMLSelectElement {
  const element = h(
    'select',
    attrs,
    options.map((o) => h('option', { value: o }, o)),
  );
  element.value = value;
  return element;
}
