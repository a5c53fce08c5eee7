/**
 * The built package (npm test builds it first) loads from a CommonJS and from an ES module consumer
 * through its own name, and ships type declarations for both.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();

describe('package consumers', () => {
  it('ships the dual build with .d.mts and .d.cts declarations', () => {
    for (const file of ['index.mjs', 'index.cjs', 'index.d.mts', 'index.d.cts']) {
      expect(existsSync(join(root, 'dist', file))).toBe(true);
    }
  });

  it('require() gets the CommonJS build', () => {
    const out = node(['-e', "const k = require('a2a-express-kit'); console.log(typeof k.createA2ARouter, typeof k.InMemoryTaskStore)"]);
    expect(out).toBe('function function');
  });

  it('import gets the ES module build', () => {
    const out = node([
      '--input-type=module',
      '-e',
      "import { createA2ARouter, TaskEvents } from 'a2a-express-kit'; console.log(typeof createA2ARouter, typeof TaskEvents)",
    ]);
    expect(out).toBe('function function');
  });

  // An app that verifies no JWT and signs no card never loads jose; one that does gets it on first use.
  const hs256 = `const { createHmac } = require('node:crypto');
    const secret = Buffer.alloc(32, 7);
    const part = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const unsigned = part({ alg: 'HS256' }) + '.' + part({ sub: 'u1', exp: Math.floor(Date.now() / 1000) + 60 });
    const token = unsigned + '.' + createHmac('sha256', secret).update(unsigned).digest('base64url');
    const req = { headers: { authorization: 'Bearer ' + token } };`;
  const joseLoaded = "Object.keys(require.cache).some((file) => file.includes('/node_modules/jose/'))";

  it('require() loads jose only when the first token is verified', () => {
    const out = node([
      '-e',
      `${hs256}
      const kit = require('a2a-express-kit');
      const source = kit.bearerJwt({ key: secret });
      const before = ${joseLoaded};
      source.resolve(req).then((caller) => console.log(before, caller.id, ${joseLoaded}));`,
    ]);
    expect(out).toBe('false u1 true');
  });

  it('import verifies a token through jose loaded on first use', () => {
    const out = node([
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
      const require = createRequire(process.cwd() + '/');
      ${hs256}
      const { bearerJwt } = await import('a2a-express-kit');
      console.log((await bearerJwt({ key: secret }).resolve(req)).id);`,
    ]);
    expect(out).toBe('u1');
  });

  it('ships a2a-express-kit/testing with .d.mts and .d.cts declarations', () => {
    for (const file of ['testing.mjs', 'testing.cjs', 'testing.d.mts', 'testing.d.cts']) {
      expect(existsSync(join(root, 'dist', file))).toBe(true);
    }
  });

  // The error classes must be the root entry's own, or a store that throws them fails `instanceof`.
  it('require() gets a2a-express-kit/testing, sharing the store classes with the root entry', () => {
    const out = node([
      '-e',
      "const t = require('a2a-express-kit/testing'), k = require('a2a-express-kit'); console.log(typeof t.describeTaskStoreContract, typeof t.withLatency, t.InvalidPageTokenError === k.InvalidPageTokenError)",
    ]);
    expect(out).toBe('function function true');
  });

  it('import gets a2a-express-kit/testing, sharing the store classes with the root entry', () => {
    const out = node([
      '--input-type=module',
      '-e',
      "import { describeTaskStoreContract, withLatency, InMemoryTaskStore } from 'a2a-express-kit/testing'; import * as k from 'a2a-express-kit'; console.log(typeof describeTaskStoreContract, typeof withLatency, InMemoryTaskStore === k.InMemoryTaskStore)",
    ]);
    expect(out).toBe('function function true');
  });

  // The inspector's chunk finds its page bundle (dist/inspector) beside it in either build.
  const inspectorApp = (load: string) => `${load}
    const card = { name: 'a', description: 'b', version: '1', capabilities: {}, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [{ id: 's', name: 's', description: 's', tags: ['t'] }] };
    const quiet = { debug() {}, info() {}, warn() {}, error: (o, m) => console.error(m, o) };
    const app = express();
    app.use('/agent', kit.createA2ARouter({ agentCard: card, executor: { execute: (c, e) => e.reply('hi') }, inspector: true, logger: quiet }));
    const server = app.listen(0, '127.0.0.1', async () => {
      const base = 'http://127.0.0.1:' + server.address().port + '/agent/_inspector/';
      const [page, js] = await Promise.all([fetch(base), fetch(base + 'app.js')]);
      console.log(page.status, js.status, js.headers.get('content-type'));
      server.close();
    });`;

  it.each([
    ['require()', ['-e', inspectorApp("const express = require('express'); const kit = require('a2a-express-kit');")]],
    ['import', ['--input-type=module', '-e', inspectorApp("import express from 'express'; import * as kit from 'a2a-express-kit';")]],
  ])('%s serves the inspector page and its bundle from dist/inspector', (_how, args) => {
    expect(node(args)).toBe('200 200 text/javascript; charset=utf-8');
  });
});
