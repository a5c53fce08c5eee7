/**
 * Query parameters of the GET routes (§11.5): integers, booleans, enums by name, timestamps,
 * validated by the same zod schemas as the JSON-RPC params; unknown ones ignored (§5.7).
 */
import type { AgentExecutor } from '../../lib';
import { queryParams } from '../../lib/protocol/rest';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { fieldViolations, rest, sendBody } from './helpers';

describe('queryParams', () => {
  it('converts integers and booleans by field, leaves the rest as text', () => {
    expect(queryParams('ListTasks', 'pageSize=5&includeArtifacts=true&historyLength=0&status=TASK_STATE_WORKING&contextId=42')).toEqual({
      pageSize: 5,
      includeArtifacts: true,
      historyLength: 0,
      status: 'TASK_STATE_WORKING',
      contextId: '42',
    });
  });

  it('leaves text that is no integer or boolean for zod to name', () => {
    expect(queryParams('ListTasks', 'pageSize=5.5&includeArtifacts=yes&historyLength=')).toEqual({
      pageSize: '5.5',
      includeArtifacts: 'yes',
      historyLength: '',
    });
  });

  it('decodes values, and refuses a parameter given twice', () => {
    expect(queryParams('ListTasks', 'contextId=a%20b%2Bc&pageToken=x+y')).toEqual({ contextId: 'a b+c', pageToken: 'x y' });
    expect(() => queryParams('ListTasks', 'pageSize=1&pageSize=2')).toThrow('pageSize: must be given once');
  });

  it('a malformed %-escape is an invalid request naming the parameter (not text turned into U+FFFD)', () => {
    expect(() => queryParams('ListTasks', 'contextId=%E0%A4%A')).toThrow('contextId: is not a valid percent-encoded query parameter');
    expect(() => queryParams('ListTasks', 'bad%ZZname=1')).toThrow('query: is not a valid percent-encoded query parameter name');
    expect(queryParams('ListTasks', '&&pageSize=2&flag')).toEqual({ pageSize: 2, flag: '' });
  });
});

const executor: AgentExecutor = {
  async execute(_ctx, events) {
    await events.complete('done');
  },
};

describe('GET query validation over HTTP', () => {
  let server: TestServer;
  let taskId: string;
  beforeAll(async () => {
    server = await startAgent(executor);
    taskId = (await rest(server.url, 'POST', '/message:send', { body: sendBody('x') })).body.task.id;
  });
  afterAll(() => server.close());

  const invalid: [string, string, string][] = [
    ['/tasks?pageSize=0', 'pageSize', 'pageSize must be between 1 and 100'],
    ['/tasks?pageSize=101', 'pageSize', 'pageSize must be between 1 and 100'],
    ['/tasks?pageSize=ten', 'pageSize', 'pageSize must be an integer'],
    ['/tasks?pageSize=1.5', 'pageSize', 'pageSize must be an integer'],
    ['/tasks?historyLength=-1', 'historyLength', 'historyLength must be >= 0'],
    ['/tasks?includeArtifacts=1', 'includeArtifacts', 'includeArtifacts must be a boolean'],
    ['/tasks?includeArtifacts=TRUE', 'includeArtifacts', 'includeArtifacts must be a boolean'],
    ['/tasks?status=WORKING', 'status', 'status must be a task state such as TASK_STATE_WORKING'],
    ['/tasks?statusTimestampAfter=yesterday', 'statusTimestampAfter', 'statusTimestampAfter must be an RFC 3339 timestamp'],
    ['/tasks?pageToken=not-a-token', 'pageToken', 'is not a token this server issued'],
    ['/tasks?contextId=a&contextId=b', 'contextId', 'must be given once'],
    ['/tasks?contextId=%E0%A4%A', 'contextId', 'is not a valid percent-encoded query parameter'],
  ];
  it.each(invalid)('%s: 400 INVALID_ARGUMENT naming %s', async (path, field, description) => {
    const reply = await rest(server.url, 'GET', path);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(fieldViolations(reply.body)).toEqual([{ field, description }]);
  });

  it('GET /tasks/{id}?historyLength=abc: 400 naming historyLength', async () => {
    const reply = await rest(server.url, 'GET', `/tasks/${taskId}?historyLength=abc`);
    expect(reply.status).toBe(400);
    expect(fieldViolations(reply.body)).toEqual([{ field: 'historyLength', description: 'historyLength must be an integer' }]);
  });

  it('timestamps: RFC 3339, with Z or an offset', async () => {
    const past = encodeURIComponent('2000-01-01T00:00:00Z');
    const listed = await rest(server.url, 'GET', `/tasks?statusTimestampAfter=${past}`);
    expect(listed.status).toBe(200);
    expect(listed.body.tasks.map((t: { id: string }) => t.id)).toContain(taskId);
    const future = await rest(server.url, 'GET', `/tasks?statusTimestampAfter=${encodeURIComponent('2999-01-01T00:00:00.000+02:00')}`);
    expect(future.status).toBe(200);
    expect(future.body.tasks).toEqual([]);
  });

  it('enums by name', async () => {
    expect((await rest(server.url, 'GET', '/tasks?status=TASK_STATE_COMPLETED')).body.tasks.length).toBeGreaterThan(0);
    expect((await rest(server.url, 'GET', '/tasks?status=TASK_STATE_WORKING')).body.tasks).toEqual([]);
  });

  it('unknown parameters (and the path fields) are ignored; the path wins', async () => {
    const reply = await rest(server.url, 'GET', `/tasks/${taskId}?id=other&foo=bar&historyLength=0`);
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe(taskId);
    expect((await rest(server.url, 'GET', '/tasks?unknownFilter=x&limit=1')).status).toBe(200);
  });
});
