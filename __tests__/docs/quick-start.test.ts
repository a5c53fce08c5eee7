/**
 * The README's quick start runs as pasted: its server and its client (the official @a2a-js/sdk,
 * finding the card at the origin root) are written to files in the repository, as a user would
 * save them, and run with tsx. Only the port changes (3000 -> a free one), so the test never
 * collides with anything else on the machine.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { codeBlocks, ROOT } from './markdown';

declare const EXPRESS_MAJOR: 4 | 5;

const folder = join(ROOT, '__tests__/docs', `.quick-start-${process.pid}`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

(EXPRESS_MAJOR === 5 ? describe : describe.skip)('the README quick start', () => {
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('serves the agent, and the official client finds its card at the root and gets the parked task', async () => {
    const [server, client] = codeBlocks('README.md').filter((block) => block.marker === 'standalone');
    expect(server.code).toContain('agent.wellKnownCard');
    expect(client.code).toContain('createFromUrl');
    const port = String(await freePort());
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'server.ts'), server.code.replaceAll('3000', port));
    writeFileSync(join(folder, 'client.ts'), client.code.replaceAll('3000', port));

    const serving = spawn(process.execPath, ['--import', 'tsx', join(folder, 'server.ts')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let errors = '';
      serving.stderr.setEncoding('utf8').on('data', (text: string) => (errors += text));
      await new Promise<void>((resolve, reject) => {
        let out = '';
        serving.stdout.setEncoding('utf8').on('data', (text: string) => {
          out += text;
          if (out.includes(`http://127.0.0.1:${port}/agent`)) resolve();
        });
        serving.once('exit', (code) => reject(new Error(`the quick start server exited (${code}): ${errors}`)));
      });

      const run = spawnSync(process.execPath, ['--import', 'tsx', join(folder, 'client.ts')], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const reply = JSON.parse(run.stdout);
      expect(reply.status.message.parts[0].content).toEqual({ $case: 'text', value: 'Which day?' });
    } finally {
      serving.kill('SIGKILL');
    }
  }, 60_000);
});
