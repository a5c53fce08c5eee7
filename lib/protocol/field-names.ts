/** ProtoJSON field names on input (§5.5): a proto name (`history_length`) read as its JSON name; free-form values untouched. */
import { invalidParams } from '../errors.js';

/** The fields of a request message that hold messages, by JSON name; empty for a flat message. */
interface Shape {
  readonly [jsonName: string]: Shape;
}

const FLAT: Shape = {};
const PUSH_CONFIG: Shape = { authentication: FLAT };
const MESSAGE: Shape = { parts: FLAT };
const SEND_MESSAGE: Shape = { message: MESSAGE, configuration: { taskPushNotificationConfig: PUSH_CONFIG } };

/** Request message per A2A operation (the v1.0 JSON-RPC method names). Unlisted: flat. */
const REQUESTS: Readonly<Record<string, Shape>> = {
  SendMessage: SEND_MESSAGE,
  SendStreamingMessage: SEND_MESSAGE,
  CreateTaskPushNotificationConfig: PUSH_CONFIG,
};

/** v0.3 REST's SendMessageRequest: parts are `content`, file and data parts are messages, push config is `pushNotification`. */
const V03_REST_SEND_MESSAGE: Shape = {
  message: { content: { file: FLAT, data: FLAT } },
  request: { content: { file: FLAT, data: FLAT } },
  configuration: { pushNotification: PUSH_CONFIG },
};

const PROTO_NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

/** `history_length` → `historyLength` (protoc's JSON name: drop `_`, upper-case the next letter). */
export function jsonNameOf(protoName: string): string {
  return protoName.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `params` with proto names as JSON names (itself when none: nothing copied); a field under both names is invalid. */
export function withJsonNames(operation: string, params: unknown): unknown {
  return isObject(params) ? renamed(params, REQUESTS[operation] ?? FLAT, '') : params;
}

/** A v0.3 REST SendMessageRequest body with its proto field names as JSON names (as withJsonNames). */
export function withV03RestJsonNames(body: unknown): unknown {
  return isObject(body) ? renamed(body, V03_REST_SEND_MESSAGE, '') : body;
}

function renamed(object: Record<string, unknown>, shape: Shape, path: string): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  const keys = Object.keys(object);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const name = key.includes('_') && PROTO_NAME.test(key) ? jsonNameOf(key) : key;
    const value = object[key];
    const inner = shape[name];
    const next = inner && Object.hasOwn(shape, name) ? renamedValue(value, inner, path ? `${path}.${name}` : name) : value;
    if (name === key && next === value && out === undefined) continue;
    if (out === undefined) {
      out = {};
      for (let j = 0; j < i; j++) if (keys[j] !== '__proto__') out[keys[j]] = object[keys[j]];
    }
    if (name === '__proto__') continue; // never a field; assigning it would set the prototype
    if (name !== key && Object.hasOwn(object, name)) {
      const field = path ? `${path}.${name}` : name;
      throw invalidParams([{ field, description: `is given twice (as ${key} and ${name})` }]);
    }
    out[name] = next;
  }
  return out ?? object;
}

function renamedValue(value: unknown, shape: Shape, path: string): unknown {
  if (isObject(value)) return renamed(value, shape, path);
  if (!Array.isArray(value)) return value; // zod reports the wrong type
  let out: unknown[] | undefined;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    const next = isObject(item) ? renamed(item, shape, `${path}[${i}]`) : item;
    if (next !== item) (out ??= value.slice())[i] = next;
  }
  return out ?? value;
}
