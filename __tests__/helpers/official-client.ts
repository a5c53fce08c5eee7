/** Requests as the official @a2a-js/sdk client builds them (ts-proto shapes: numeric enums, oneof parts). */
import { Role, type Message } from '@a2a-js/sdk';

let nextMessage = 0;

/** A client-side user Message with one text part. */
export function clientMessage(text: string, extra: Partial<Message> = {}): Message {
  return {
    messageId: `client-${++nextMessage}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

/** SendMessage params for the client; a configuration only when returnImmediately is given. */
export function clientSend(text: string, extra: Partial<Message> = {}, returnImmediately?: boolean) {
  return {
    tenant: '',
    message: clientMessage(text, extra),
    configuration:
      returnImmediately === undefined ? undefined : { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
    metadata: undefined,
  };
}
