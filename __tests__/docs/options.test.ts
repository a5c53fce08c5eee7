/**
 * docs/options.md names every createA2ARouter option and no other: the keys of the router's zod
 * schema (RouterOptionsSchema, wherever it lives under lib/), read from the source with the
 * TypeScript parser, against the first column of the options table.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT } from './markdown';

declare const EXPRESS_MAJOR: 4 | 5;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The property names of the object literal passed to z.strictObject()/z.object() in `const RouterOptionsSchema = ...`. */
function schemaKeys(): string[] {
  for (const file of sourceFiles(join(ROOT, 'lib'))) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('RouterOptionsSchema =')) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    let keys: string[] | undefined;
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === 'RouterOptionsSchema') {
        const find = (inner: ts.Node): void => {
          if (!keys && ts.isCallExpression(inner) && /\.(strictObject|object)$/.test(inner.expression.getText(source))) {
            const literal = inner.arguments[0];
            if (literal && ts.isObjectLiteralExpression(literal)) {
              keys = literal.properties.map((property) => property.name!.getText(source));
              return;
            }
          }
          ts.forEachChild(inner, find);
        };
        if (node.initializer) find(node.initializer);
      }
      if (!keys) ts.forEachChild(node, visit);
    };
    visit(source);
    if (keys) return keys;
  }
  throw new Error('RouterOptionsSchema not found under lib/');
}

/** The backticked names in the first column of the first table of docs/options.md. */
function documentedKeys(): string[] {
  const lines = readFileSync(join(ROOT, 'docs/options.md'), 'utf8').split('\n');
  const start = lines.findIndex((line) => line.startsWith('| option |'));
  const rows: string[] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const first = lines[i].split('|')[1];
    for (const match of first.matchAll(/`([A-Za-z0-9_]+)`/g)) rows.push(match[1]);
  }
  return rows;
}

(EXPRESS_MAJOR === 5 ? describe : describe.skip)('docs/options.md', () => {
  it('has one row for every option of createA2ARouter, and none for an option it does not have', () => {
    const schema = schemaKeys();
    expect(schema.length).toBeGreaterThan(20);
    const documented = documentedKeys();
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...schema].sort());
  });
});
