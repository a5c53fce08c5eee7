/**
 * The `/{tenant}` path prefix of every HTTP+JSON route (a2a.proto `additional_bindings`, §10 of the
 * digest): it plays the role of `params.tenant`, partitions tasks, and must match the tenant the
 * middlewares or the callContext hook resolved.
 */
import type { AgentExecutor } from '../../lib';
import { header } from '../../lib/middleware';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { fieldViolations, rest, restStream, sendBody } from './helpers';

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'task') return events.complete(`done in ${ctx.tenant || '(none)'}`);
    await events.reply(`tenant ${ctx.tenant || '(none)'}`);
  },
};

const textOf = (reply: { body: { message?: { parts: { text: string }[] } } }) => reply.body.message?.parts[0].text;

describe('the /{tenant} prefix', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, {
      agentCard: { ...testCard, capabilities: { ...testCard.capabilities, extendedAgentCard: true } },
      extendedAgentCard: { ...testCard, name: 'extended' },
      callContext: () => ({ caller: { id: 'alice', authenticated: true } }),
    });
  });
  afterAll(() => server.close());

  it('is the tenant the agent sees', async () => {
    expect(textOf(await rest(server.url, 'POST', '/acme/message:send', { body: sendBody('hi') }))).toBe('tenant acme');
    expect(textOf(await rest(server.url, 'POST', '/message:send', { body: sendBody('hi') }))).toBe('tenant (none)');
  });

  it('partitions tasks: another tenant, or none, does not see them', async () => {
    const { task } = (await rest(server.url, 'POST', '/acme/message:send', { body: sendBody('task') })).body;
    expect(task.status.message.parts[0].text).toBe('done in acme');
    expect((await rest(server.url, 'GET', `/acme/tasks/${task.id}`)).status).toBe(200);
    expect((await rest(server.url, 'GET', `/globex/tasks/${task.id}`)).status).toBe(404);
    expect((await rest(server.url, 'GET', `/tasks/${task.id}`)).status).toBe(404);
    const listed = await rest(server.url, 'GET', '/acme/tasks');
    expect(listed.body.tasks.map((t: { id: string }) => t.id)).toContain(task.id);
    expect((await rest(server.url, 'GET', '/globex/tasks')).body.tasks).toEqual([]);
    expect((await rest(server.url, 'POST', `/globex/tasks/${task.id}:cancel`)).status).toBe(404);
    expect((await rest(server.url, 'POST', `/acme/tasks/${task.id}:cancel`)).status).toBe(400); // completed: not cancelable
  });

  it('serves the streams and the extended card under the prefix', async () => {
    const stream = await restStream(server.url, 'POST', '/acme/message:stream', { body: sendBody('hi') });
    expect(stream.events).toEqual([{ message: expect.objectContaining({ parts: [{ text: 'tenant acme' }] }) }]);
    const { task } = (await rest(server.url, 'POST', '/acme/message:send', { body: sendBody('task') })).body;
    for (const method of ['GET', 'POST']) {
      expect((await restStream(server.url, method, `/acme/tasks/${task.id}:subscribe`)).status).toBe(400); // terminal
      expect((await restStream(server.url, method, `/globex/tasks/${task.id}:subscribe`)).status).toBe(404);
    }
    const card = await rest(server.url, 'GET', '/acme/extendedAgentCard');
    expect(card.status).toBe(200);
    expect(card.body.name).toBe('extended');
  });

  it('the path wins over a tenant in the body or the query; without a prefix, those are the tenant', async () => {
    expect(textOf(await rest(server.url, 'POST', '/acme/message:send', { body: sendBody('hi', {}, { tenant: 'globex' }) }))).toBe('tenant acme');
    expect(textOf(await rest(server.url, 'POST', '/message:send', { body: sendBody('hi', {}, { tenant: 'globex' }) }))).toBe('tenant globex');
    const { task } = (await rest(server.url, 'POST', '/acme/message:send', { body: sendBody('task') })).body;
    expect((await rest(server.url, 'GET', `/tasks/${task.id}?tenant=acme`)).status).toBe(200);
    expect((await rest(server.url, 'GET', `/globex/tasks/${task.id}?tenant=acme`)).status).toBe(404);
  });

  it('is %-decoded', async () => {
    expect(textOf(await rest(server.url, 'POST', '/a%20b/message:send', { body: sendBody('hi') }))).toBe('tenant a b');
  });

  it('un-prefixed routes win: /tasks/tasks is GetTask, POST /tasks/message:send a message to tenant "tasks"', async () => {
    const get = await rest(server.url, 'GET', '/tasks/tasks');
    expect(get.status).toBe(404);
    expect(get.body.error.message).toBe('Task tasks not found');
    expect(textOf(await rest(server.url, 'POST', '/tasks/message:send', { body: sendBody('hi') }))).toBe('tenant tasks');
  });
});

describe('the prefix against the resolved tenant (the call layer check)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, { tenant: { from: header('x-tenant') } });
  });
  afterAll(() => server.close());

  it('another tenant than a2aTenant resolved: 400 naming tenant', async () => {
    const reply = await rest(server.url, 'POST', '/globex/message:send', { body: sendBody('hi'), headers: { 'x-tenant': 'acme' } });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(fieldViolations(reply.body)).toEqual([{ field: 'tenant', description: 'does not match the tenant this request was authorized for' }]);
    const get = await rest(server.url, 'GET', '/globex/tasks', { headers: { 'x-tenant': 'acme' } });
    expect(get.status).toBe(400);
  });

  it('the same tenant, or no prefix, is served in the resolved tenant', async () => {
    expect(textOf(await rest(server.url, 'POST', '/acme/message:send', { body: sendBody('hi'), headers: { 'x-tenant': 'acme' } }))).toBe(
      'tenant acme',
    );
    expect(textOf(await rest(server.url, 'POST', '/message:send', { body: sendBody('hi'), headers: { 'x-tenant': 'acme' } }))).toBe('tenant acme');
  });

  it('a2aTenant rejects a request without a tenant in the REST format', async () => {
    const reply = await rest(server.url, 'GET', '/acme/tasks');
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });
});
