/**
 * Ceiling: bare Express 5, `express.json()` and one handler that answers with a JSON-RPC-shaped
 * A2A v1.0 result. No validation, no store, no task engine: the fastest an Express A2A server
 * answering the same requests could be. SubscribeToTask (the idle-streams phase) sends one task
 * event and holds the response open, with nothing attached to it: the floor of an idle SSE stream
 * in Express (Node's socket, parser, request and response objects).
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import type { Request, Response } from 'express';
import { listen, mountBenchControl } from './common.js';
import { STREAM_PROGRESS_UPDATES } from '../workloads.js';

interface RpcBody {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: {
    id?: string;
    message?: { messageId?: string; taskId?: string; contextId?: string; parts?: Array<{ text?: string }> };
  };
}

const now = () => new Date().toISOString();

function agentMessage(text: string, contextId: string, taskId?: string) {
  return {
    messageId: randomUUID(),
    role: 'ROLE_AGENT',
    parts: [{ text }],
    contextId,
    ...(taskId ? { taskId } : {}),
  };
}

function task(id: string, contextId: string, state: string, text: string, history: unknown[]) {
  return {
    id,
    contextId,
    status: { state, message: agentMessage(text, contextId, id), timestamp: now() },
    history,
  };
}

function sse(res: Response, id: RpcBody['id'], result: unknown): void {
  res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
}

const app = express();
mountBenchControl(app, {});
app.use(express.json());
app.post('/', (req: Request, res: Response) => {
  const body = req.body as RpcBody;
  const id = body.id ?? null;
  const message = body.params?.message;
  switch (body.method) {
    case 'SendMessage': {
      const text = message?.parts?.[0]?.text ?? '';
      const contextId = message?.contextId || randomUUID();
      if (text === 'message') {
        res.json({ jsonrpc: '2.0', id, result: { message: agentMessage('pong', contextId) } });
        return;
      }
      const taskId = message?.taskId || randomUUID();
      const user = { ...message, taskId, contextId };
      const state = text === 'input' && !message?.taskId ? 'TASK_STATE_INPUT_REQUIRED' : 'TASK_STATE_COMPLETED';
      res.json({ jsonrpc: '2.0', id, result: { task: task(taskId, contextId, state, 'done', [user]) } });
      return;
    }
    case 'SendStreamingMessage': {
      const contextId = message?.contextId || randomUUID();
      const taskId = randomUUID();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      sse(res, id, { task: { id: taskId, contextId, status: { state: 'TASK_STATE_WORKING', timestamp: now() }, history: [message] } });
      for (let i = 0; i < STREAM_PROGRESS_UPDATES; i += 1) {
        sse(res, id, {
          statusUpdate: {
            taskId,
            contextId,
            status: { state: 'TASK_STATE_WORKING', message: agentMessage(`step ${i + 1}`, contextId, taskId), timestamp: now() },
          },
        });
      }
      sse(res, id, {
        statusUpdate: {
          taskId,
          contextId,
          status: { state: 'TASK_STATE_COMPLETED', message: agentMessage('done', contextId, taskId), timestamp: now() },
        },
      });
      res.end();
      return;
    }
    case 'SubscribeToTask': {
      const taskId = body.params?.id ?? '';
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      sse(res, id, { task: task(taskId, 'ctx', 'TASK_STATE_INPUT_REQUIRED', 'need more input', []) });
      return; // held open until the client leaves
    }
    case 'GetTask':
    case 'CancelTask': {
      const taskId = body.params?.id ?? '';
      const state = body.method === 'GetTask' ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_CANCELED';
      res.json({ jsonrpc: '2.0', id, result: task(taskId, 'ctx', state, 'done', []) });
      return;
    }
    default:
      res.json({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
  }
});

listen(app, 'ceiling');
