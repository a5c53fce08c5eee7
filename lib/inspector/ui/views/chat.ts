/** Chat view: binding, version and mode per message; text, data and file parts; answers folded live. */
import { buildRequest, send, type Binding, type Version } from '../a2a.js';
import { field, h, select, show } from '../dom.js';
import { fold, modelView, newModel, type TaskModel } from './parts.js';

type Json = Record<string, unknown>;
type Mode = 'blocking' | 'streaming' | 'return immediately';

/** A v1.0 message in the wire shape of `version` and `binding` (v0.3 HTTP+JSON is the v0.3 proto's ProtoJSON). */
function messageOf(parts: Json[], version: Version, binding: Binding, ids: { taskId?: string; contextId?: string }): Json {
  const messageId = crypto.randomUUID();
  if (version === '1.0') return { messageId, role: 'ROLE_USER', parts, ...ids };
  if (binding === 'HTTP+JSON') {
    const content = parts.map((p) =>
      typeof p.text === 'string'
        ? { text: p.text }
        : p.data !== undefined
          ? { data: { data: p.data } }
          : { file: { fileWithBytes: p.raw, mimeType: p.mediaType } },
    );
    return { messageId, role: 'ROLE_USER', content, ...ids };
  }
  const v03Parts = parts.map((p) =>
    typeof p.text === 'string'
      ? { kind: 'text', text: p.text }
      : p.data !== undefined
        ? { kind: 'data', data: p.data }
        : { kind: 'file', file: { bytes: p.raw, name: p.filename, mimeType: p.mediaType } },
  );
  return { kind: 'message', messageId, role: 'user', parts: v03Parts, ...ids };
}

export function chatView(): HTMLElement {
  const binding = select(['JSON-RPC', 'HTTP+JSON'], 'JSON-RPC', { id: 'chat-binding' });
  const version = select(['1.0', '0.3'], '1.0', { id: 'chat-version' });
  const mode = select(['blocking', 'streaming', 'return immediately'], 'streaming', { id: 'chat-mode' });
  const newContext = h('input', { type: 'checkbox', id: 'chat-new-context' });
  const text = h('textarea', { id: 'chat-text', rows: 3, placeholder: 'Message text' });
  const data = h('textarea', { id: 'chat-data', rows: 2, placeholder: 'Data part (JSON, optional)' });
  const file = h('input', { type: 'file', id: 'chat-file' });
  const log = h('div', { class: 'chat-log', id: 'chat-log' });
  let contextId: string | undefined;

  /** Sends parts and folds the answer (or each streamed event) into `model`, re-drawn in `bubble`. */
  const deliver = async (parts: Json[], model: TaskModel, bubble: HTMLElement, taskId?: string) => {
    const v = version.value as Version;
    const m = mode.value as Mode;
    const ids = { ...(taskId ? { taskId } : {}), ...(contextId && (taskId || !newContext.checked) ? { contextId } : {}) };
    const message = messageOf(parts, v, binding.value as Binding, ids);
    const configuration = v === '1.0' ? { returnImmediately: m === 'return immediately' } : { blocking: m !== 'return immediately' };
    const op = m === 'streaming' ? 'SendStreamingMessage' : 'SendMessage';
    const redraw = () => show(bubble, modelView(model), inputRequired(model, bubble));
    const answer = await send(buildRequest(op, { message, configuration }, binding.value as Binding, v), (frame) => {
      fold(model, frame.data);
      redraw();
    });
    if (answer.body !== undefined) fold(model, answer.body);
    if (answer.status >= 400 && !model.error) model.error = answer.body;
    if (model.contextId) contextId = model.contextId;
    redraw();
  };

  /** An input-required task is answered in place: the reply goes to the same task and bubble. */
  const inputRequired = (model: TaskModel, bubble: HTMLElement): Node | null => {
    if (model.state !== 'TASK_STATE_INPUT_REQUIRED' || !model.taskId) return null;
    const reply = h('input', { class: 'answer', placeholder: 'Answer the agent' });
    const answer = () => {
      log.appendChild(h('div', { class: 'bubble user' }, h('pre', { class: 'text' }, reply.value)));
      void deliver([{ text: reply.value }], model, bubble, model.taskId);
    };
    return h('form', { class: 'inline', onsubmit: (e) => (e.preventDefault(), answer()) }, reply, h('button', {}, 'Answer'));
  };

  const submit = async () => {
    const parts: Json[] = [];
    if (text.value) parts.push({ text: text.value });
    if (data.value.trim()) parts.push({ data: JSON.parse(data.value) as unknown });
    const chosen = file.files?.[0];
    if (chosen) {
      const bytes = new Uint8Array(await chosen.arrayBuffer());
      let binary = '';
      for (const b of bytes) binary += String.fromCharCode(b);
      parts.push({ raw: btoa(binary), filename: chosen.name, mediaType: chosen.type || 'application/octet-stream' });
    }
    if (parts.length === 0) return;
    log.appendChild(
      h(
        'div',
        { class: 'bubble user' },
        parts.map((p) =>
          h(
            'pre',
            { class: 'text' },
            typeof p.text === 'string' ? p.text : p.data !== undefined ? JSON.stringify(p.data) : `📎 ${String(p.filename)}`,
          ),
        ),
      ),
    );
    const bubble = h('div', { class: 'bubble agent' }, '…');
    log.appendChild(bubble);
    text.value = '';
    data.value = '';
    file.value = '';
    if (newContext.checked) {
      contextId = undefined;
      newContext.checked = false;
    }
    await deliver(parts, newModel(), bubble).catch((error: unknown) => show(bubble, h('div', { class: 'bad' }, String(error))));
  };

  return h(
    'section',
    { class: 'view', id: 'chat-view' },
    h('div', { class: 'toolbar' }, field('Binding', binding), field('Version', version), field('Mode', mode), field('New context', newContext)),
    log,
    h(
      'form',
      { class: 'composer', onsubmit: (e) => (e.preventDefault(), void submit()) },
      text,
      data,
      h('div', {}, file, h('button', { id: 'chat-send' }, 'Send')),
    ),
  );
}
