// The inspector's page bundle (lib/inspector/ui → dist/inspector/app.js and app.css): part of
// `npm run build`; the browser tests call buildInspector() before they start.
import { build } from 'esbuild';
import { chmod, mkdtemp, rename, rm, mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Builds into a temporary folder, then renames it into place: concurrent builds never see half a bundle. */
export async function buildInspector(outdir = join(root, 'dist', 'inspector')) {
  await mkdir(dirname(outdir), { recursive: true });
  const temp = await mkdtemp(join(dirname(outdir), '.inspector-'));
  await build({
    entryPoints: [
      { in: join(root, 'lib/inspector/ui/main.ts'), out: 'app' },
      { in: join(root, 'lib/inspector/ui/app.css'), out: 'app' },
    ],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2022',
    platform: 'browser',
    outdir: temp,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await chmod(temp, 0o755);
  await rm(outdir, { recursive: true, force: true });
  await rename(temp, outdir).catch(async (error) => {
    // Another build renamed its folder into place first: that bundle is the same.
    await rm(temp, { recursive: true, force: true });
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
  });
  return outdir;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await buildInspector();
