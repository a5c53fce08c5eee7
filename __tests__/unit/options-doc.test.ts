/**
 * docs/options.md documents createA2ARouter's options: its table lists exactly the option names the
 * one zod schema (lib/express/options.ts) accepts, a row each, the name in backticks in the first
 * column. An option added to the schema without a row (or a row left for a removed one) fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RouterOptionsSchema } from '../../lib/express/options';

/** The names in the first column of the options table (`| \`name\` | ... |`). */
function documentedOptions(markdown: string): string[] {
  const names: string[] = [];
  for (const line of markdown.split('\n')) {
    const match = /^\|\s*`([^`]+)`\s*\|/.exec(line);
    if (match) names.push(match[1]);
  }
  return names;
}

describe('docs/options.md', () => {
  const markdown = readFileSync(path.join(__dirname, '../../docs/options.md'), 'utf8');
  const documented = documentedOptions(markdown);
  const accepted = Object.keys(RouterOptionsSchema.shape);

  it('lists every option the schema accepts, and nothing else', () => {
    expect([...documented].sort()).toEqual([...accepted].sort());
  });

  it('has one row per option', () => {
    expect(documented.length).toBe(new Set(documented).size);
  });

  it('reads the table the way the check above does', () => {
    expect(documentedOptions('| `a` | x |\n| b | y |\n|`c`|z|')).toEqual(['a', 'c']);
  });
});
