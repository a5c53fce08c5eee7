/** Reading answers of either version and binding into one shape, and showing parts (escaped, always). */
import { v1State } from '../a2a.js';
import { h, jsonTree, type Child } from '../dom.js';

type Json = Record<string, unknown>;

export interface TaskModel {
  taskId?: string;
  contextId?: string;
  state: string;
  status: Json[];
  artifacts: Map<string, { name?: string; parts: Json[] }>;
  messages: Json[];
  error?: unknown;
}

export const newModel = (): TaskModel => ({ state: '', status: [], artifacts: new Map(), messages: [] });

const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null ? (v as Json) : undefined);

/** Folds one answer or stream event (v1.0 wrapper or v0.3 `kind`, JSON-RPC envelope or not) into `model`. */
export function fold(model: TaskModel, answer: unknown): void {
  let value = obj(answer);
  if (!value) return;
  if ('jsonrpc' in value) {
    if (value.error) model.error = value.error;
    value = obj(value.result);
    if (!value) return;
  }
  const kind = value.kind;
  const task = obj(value.task) ?? (kind === 'task' ? value : undefined);
  const message = obj(value.message) ?? (kind === 'message' ? value : undefined);
  const status = obj(value.statusUpdate) ?? (kind === 'status-update' ? value : undefined);
  const artifact = obj(value.artifactUpdate) ?? (kind === 'artifact-update' ? value : undefined);
  if (task) {
    model.taskId = String(task.id);
    model.contextId = String(task.contextId ?? model.contextId ?? '');
    setStatus(model, obj(task.status));
    for (const a of (task.artifacts as Json[] | undefined) ?? [])
      model.artifacts.set(String(a.artifactId), { name: a.name as string, parts: [...((a.parts as Json[]) ?? [])] });
  } else if (message) {
    model.contextId = String(message.contextId ?? model.contextId ?? '');
    model.messages.push(message);
  } else if (status) {
    model.taskId = String(status.taskId);
    model.contextId = String(status.contextId ?? model.contextId ?? '');
    setStatus(model, obj(status.status));
  } else if (artifact) {
    const a = obj(artifact.artifact) ?? {};
    const id = String(a.artifactId);
    const held = model.artifacts.get(id);
    const parts = (a.parts as Json[]) ?? [];
    if (held && artifact.append) appendParts(held.parts, parts);
    else model.artifacts.set(id, { name: a.name as string, parts: [...parts] });
  } else if (value.error === undefined && 'code' in value && 'message' in value) model.error = value;
}

function setStatus(model: TaskModel, status: Json | undefined): void {
  if (!status) return;
  model.state = v1State(status.state);
  model.status.push(status);
}

/** A streamed chunk: text joins the last text part, anything else is a new part. */
function appendParts(into: Json[], parts: Json[]): void {
  for (const part of parts) {
    const last = into[into.length - 1];
    if (typeof part.text === 'string' && last && typeof last.text === 'string') into[into.length - 1] = { ...last, text: last.text + part.text };
    else into.push(part);
  }
}

/** A URL the page may link to: http(s) only, never `javascript:` or `data:`. */
function safeHref(url: unknown): string | undefined {
  try {
    const parsed = new URL(String(url));
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

function download(base64: string, name: string, type: string): Node {
  const bytes = Uint8Array.from(atob(base64.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  return h('a', { href, download: name, class: 'file' }, `⬇ ${name} (${type}, ${bytes.length} bytes)`);
}

/** One part of either version: text as text, data as a JSON tree, files as downloads or links. */
export function partView(part: Json): Node {
  if (typeof part.text === 'string') return h('pre', { class: 'text' }, part.text);
  if (part.data !== undefined) return h('div', { class: 'data' }, jsonTree(part.data));
  const file = obj(part.file) ?? part;
  const name = String(file.filename ?? file.name ?? 'file');
  const type = String(file.mediaType ?? file.mimeType ?? 'application/octet-stream');
  const raw = file.raw ?? file.bytes ?? file.fileWithBytes;
  if (typeof raw === 'string') return download(raw, name, type);
  const href = safeHref(file.url ?? file.uri ?? file.fileWithUri);
  if (href) return h('a', { href, rel: 'noopener noreferrer', target: '_blank', class: 'file' }, `🔗 ${name} (${type})`);
  return jsonTree(part);
}

/** A message's parts: `parts`, or `content` in the v0.3 proto's JSON. */
export const partsOf = (message: Json | undefined): Json[] => ((message?.parts ?? message?.content) as Json[] | undefined) ?? [];

export function modelView(model: TaskModel): Child[] {
  const latest = model.status[model.status.length - 1];
  const statusParts = partsOf(obj(latest?.message));
  return [
    model.taskId
      ? h('div', { class: 'meta' }, h('span', { class: `state ${model.state}` }, model.state.replace('TASK_STATE_', '')), ` task ${model.taskId}`)
      : null,
    model.messages.map((m) => h('div', { class: 'message' }, partsOf(m).map(partView))),
    statusParts.length ? h('div', { class: 'status-message' }, statusParts.map(partView)) : null,
    [...model.artifacts.entries()].map(([id, a]) =>
      h('div', { class: 'artifact', 'data-artifact': id }, h('div', { class: 'meta' }, a.name ?? id), a.parts.map(partView)),
    ),
    model.error ? h('div', { class: 'bad' }, jsonTree(model.error)) : null,
  ];
}
