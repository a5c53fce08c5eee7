/**
 * Layering of issue 17, checked on the import graph of lib/ (read with the TypeScript compiler API):
 * no module imports itself through others, type-only imports included (a type cycle still ties two
 * modules' designs together), and lib/middleware imports nothing from lib/express.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT, tsFiles } from '../helpers/source-files';

const root = ROOT;

/** The lib/ files `file` imports or re-exports from (relative specifiers, '.js' mapped to '.ts'). */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(path.join(root, file), 'utf8'), ts.ScriptTarget.Latest);
  const targets: string[] = [];
  for (const statement of source.statements) {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier
        ? (statement.moduleSpecifier as ts.StringLiteral).text
        : undefined;
    if (!specifier?.startsWith('.')) continue;
    const target = path.posix.join(path.posix.dirname(file), specifier.replace(/\.js$/, '.ts'));
    targets.push(fs.existsSync(path.join(root, target)) ? target : target.replace(/\.ts$/, '/index.ts'));
  }
  return targets;
}

const graph = new Map(tsFiles('lib').map((file) => [file, importsOf(file)]));

/** One cycle through each strongly connected part of the graph found by a depth-first walk. */
function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') found.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('the import graph of lib/', () => {
  it('reads every file and resolves every relative import', () => {
    expect(graph.size).toBeGreaterThan(100);
    const unresolved = [...graph].flatMap(([file, targets]) => targets.filter((t) => !graph.has(t)).map((t) => `${file} -> ${t}`));
    expect(unresolved).toEqual([]);
  });

  it('has no import cycle, type-only imports included', () => {
    expect(cycles().map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('lib/middleware imports nothing from lib/express', () => {
    const upward = [...graph]
      .filter(([file]) => file.startsWith('lib/middleware/'))
      .flatMap(([file, targets]) => targets.filter((t) => t.startsWith('lib/express/')).map((t) => `${file} -> ${t}`));
    expect(upward).toEqual([]);
  });
});
