/**
 * A webhook URL the SSRF guard refuses for where it points: the client's error names the class of
 * address and the option that lets it through (`pushNotifications: { allow: [...] }`), on JSON-RPC
 * and HTTP+JSON, and the server logs one warn line per refusal.
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
    it('names the address class and pushNotifications.allow, and logs one warn line', async () => {
      const taskId = (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('park'))).result.task.id;
      const before = refusals().length;
      const reply = await pushCall(binding, server.url, 'CreateTaskPushNotificationConfig', { taskId, url: 'http://127.0.0.1:9/hook?token=secret' });
      expect(binding === 'jsonrpc' ? reply.error.code : reply.status).toBe(binding === 'jsonrpc' ? -32602 : 400);
      expect(reply.error.message).toContain('url: points to a non-public address (loopback)');
      expect(reply.error.message).toContain("pushNotifications: { allow: ['127.0.0.1'] }");
      expect(reply.text).not.toContain('secret');
      const logged = refusals().slice(before);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 'warn', fields: { taskId, webhookHost: '127.0.0.1:9', addressClass: 'loopback' } });
      expect(logged[0].message).toContain('pushNotifications: { allow: [...] }');
      expect(JSON.stringify(logged[0])).not.toContain('secret');
    });
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
      message: `points to a non-public address (${cls}), refused to guard against SSRF; an operator who trusts it adds it to the agent's allow-list: pushNotifications: { allow: ['${host}'] } (a host name, an address or a CIDR range)`,
    });
  });

  it('for a host name: names the host as written, never the address it resolved to', async () => {
    const refused = new SsrfGuard({ lookup }).resolve('http://Hooks.Internal.test/hook');
    await expect(refused).rejects.toMatchObject({ addressClass: 'private' });
    await expect(refused).rejects.toThrow("allow: ['hooks.internal.test']");
    await expect(refused).rejects.not.toThrow('10.1.2.3');
  });

  it('with publicAddresses: false, a public address is "not on the allow-list"', async () => {
    await expect(new SsrfGuard({ publicAddresses: false }).resolve('http://93.184.216.34/hook')).rejects.toMatchObject({
      addressClass: 'not allow-listed',
      message: expect.stringContaining(
        "is not on the allow-list of webhook hosts; an operator who trusts it adds it to the agent's allow-list: pushNotifications: { allow: ['93.184.216.34'] }",
      ),
    });
  });
});
