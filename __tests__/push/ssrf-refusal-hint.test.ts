/**
 * A webhook URL the SSRF guard refuses for where it points: the client's error names the class of
 * address and nothing of the server's configuration, on JSON-RPC and HTTP+JSON; the server logs the
 * option that lets it through (`pushNotifications: { allow: ['<host>'] }`) once per webhook host.
 */
import { BINDINGS } from '../helpers/bindings';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { a2aClient } from '../helpers/bindings';
import { userMessage } from '../helpers/http';
import { deferred, type Deferred } from '../helpers/async';
import { pushAgent, pushCall, recordingLogger } from './helpers';
import { SsrfGuard } from '../../lib/engine/push/ssrf-guard';

describe('the SSRF refusal says what to do', () => {
  let gate: Deferred<void>;
  let server: TestServer;
  const logger = recordingLogger();

  beforeAll(async () => {
    gate = deferred();
    // Push on, no allow-list: loopback is refused, as it is for a new user's first local receiver.
    server = await startAgent(
      pushAgent(() => gate),
      { logger, pushNotifications: { retryBaseMs: 1 } },
    );
  });
  afterAll(async () => {
    gate.resolve();
    await server.close();
  });

  const refusals = () => logger.lines.filter((line) => line.message.includes('webhook URL was refused'));

  describe.each(BINDINGS)('over %s', (binding) => {
    it('names the address class, never the server configuration', async () => {
      const taskId = (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('park'))).result.task.id;
      const reply = await pushCall(binding, server.url, 'CreateTaskPushNotificationConfig', { taskId, url: 'http://127.0.0.1:9/hook?token=secret' });
      expect(binding === 'jsonrpc' ? reply.error.code : reply.status).toBe(binding === 'jsonrpc' ? -32602 : 400);
      expect(reply.error.message).toContain('url: points to a non-public address (loopback), refused to guard against SSRF');
      expect(reply.text).not.toMatch(/pushNotifications|allow:|operator/);
      expect(reply.text).not.toContain('secret');
    });
  });

  it('logs the allow-list hint once per webhook host, with the host as the client wrote it', async () => {
    const taskId = (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('park'))).result.task.id;
    const before = refusals().length;
    for (const binding of BINDINGS) {
      for (const url of ['http://10.9.8.7:9/a?token=secret', 'http://10.9.8.7:9/b', 'http://[::1]:9/hook']) {
        const reply = await pushCall(binding, server.url, 'CreateTaskPushNotificationConfig', { taskId, url });
        expect(binding === 'jsonrpc' ? reply.error.code : reply.status).toBe(binding === 'jsonrpc' ? -32602 : 400);
      }
    }
    const logged = refusals().slice(before);
    expect(logged.map((line) => line.fields.webhookHost)).toEqual(['10.9.8.7:9', '[::1]:9']);
    expect(logged[0]).toMatchObject({ level: 'warn', fields: { taskId, addressClass: 'private' } });
    expect(logged[0].message).toContain("pushNotifications: { allow: ['10.9.8.7'] }");
    expect(logged[1]).toMatchObject({ level: 'warn', fields: { addressClass: 'loopback' } });
    expect(logged[1].message).toContain("pushNotifications: { allow: ['::1'] }");
    expect(JSON.stringify(logged)).not.toContain('secret');
  });
});

describe('SsrfGuard refusal messages', () => {
  const lookup = async () => [{ address: '10.1.2.3', family: 4 as const }];

  it.each([
    ['http://127.0.0.1/hook', 'loopback', '127.0.0.1'],
    ['http://[::1]/hook', 'loopback', '::1'],
    ['http://10.0.0.1/hook', 'private', '10.0.0.1'],
    ['http://[fd00:ec2::254]/hook', 'private', 'fd00:ec2::254'],
    ['http://169.254.169.254/latest', 'link-local', '169.254.169.254'],
    ['http://100.64.0.1/hook', 'shared (CGNAT)', '100.64.0.1'],
    ['http://224.0.0.1/hook', 'multicast', '224.0.0.1'],
    ['http://0.0.0.0/hook', 'unspecified', '0.0.0.0'],
    ['http://192.0.2.1/hook', 'reserved', '192.0.2.1'],
  ])('%s: the %s class, and allow: [%s]', async (url, cls, host) => {
    await expect(new SsrfGuard().resolve(url)).rejects.toMatchObject({
      addressClass: cls,
      allowEntry: host,
      message: `points to a non-public address (${cls}), refused to guard against SSRF`,
    });
  });

  it('for a host name: names the host as written, never the address it resolved to', async () => {
    const refused = new SsrfGuard({ lookup }).resolve('http://Hooks.Internal.test/hook');
    await expect(refused).rejects.toMatchObject({ addressClass: 'private' });
    await expect(refused).rejects.toMatchObject({ allowEntry: 'hooks.internal.test' });
    await expect(refused).rejects.not.toThrow('10.1.2.3');
  });

  it('with publicAddresses: false, a public address is "not on the allow-list"', async () => {
    await expect(new SsrfGuard({ publicAddresses: false }).resolve('http://93.184.216.34/hook')).rejects.toMatchObject({
      addressClass: 'not allow-listed',
      allowEntry: '93.184.216.34',
      message: 'is not on the allow-list of webhook hosts',
    });
  });
});
