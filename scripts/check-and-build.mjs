// npm test's first step: the typecheck and the build run side by side (each is single-threaded and
// takes about 17 s), and the step fails when either does, with both outputs shown.
import { spawn } from 'node:child_process';

const run = (command, args) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', shell: process.platform === 'win32' });
    child.on('close', (code) => resolve(code ?? 1));
  });

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const codes = await Promise.all([run(npm, ['run', '--silent', 'typecheck']), run(npm, ['run', '--silent', 'build'])]);
process.exitCode = codes.some((code) => code !== 0) ? 1 : 0;
