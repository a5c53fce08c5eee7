/**
 * Every ```ts block of README.md and docs/*.md typechecks under strict, against the library's
 * sources (`a2a-express-kit` resolves to lib/): an option renamed or a signature changed breaks the
 * test, not a reader's paste. A snippet may use the names prelude.ts exports without importing them;
 * `<!-- snippet: standalone -->` above a block forbids that (the quick start must run as pasted),
 * `<!-- snippet: skip -->` leaves a block out (kept rare: fragments that are not TypeScript files).
 */
import { join } from 'node:path';
import ts from 'typescript';
import { codeBlocks, markdownFiles, ROOT, type CodeBlock } from './markdown';

declare const EXPRESS_MAJOR: 4 | 5;

const PRELUDE = join(ROOT, '__tests__/docs/prelude.ts');

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  module: ts.ModuleKind.ESNext, // top-level await, as in an ESM app
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  esModuleInterop: true,
  skipLibCheck: true,
  noEmit: true,
  types: ['node'],
  baseUrl: ROOT,
  paths: {
    'a2a-express-kit': ['lib/index.ts'],
    'a2a-express-kit/testing': ['lib/testing/index.ts'],
    'a2a-express-kit/sqlite': ['lib/sqlite.ts'],
    'a2a-express-kit/redis': ['lib/redis.ts'],
    'a2a-express-kit/postgres': ['lib/postgres.ts'],
    // Packages the recipes use but the kit does not depend on: the few members they call (stubs/).
    'prom-client': ['__tests__/docs/stubs/prom-client.d.ts'],
    pino: ['__tests__/docs/stubs/pino.d.ts'],
    'pino-http': ['__tests__/docs/stubs/pino-http.d.ts'],
  },
};

interface Snippet {
  readonly block: CodeBlock;
  readonly fileName: string;
  /** Lines added above the block's code (the prelude import). */
  readonly offset: number;
  readonly text: string;
}

/** Top-level names a snippet declares or imports itself. */
function declaredNames(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const bind = (name: ts.BindingName | undefined): void => {
    if (!name) return;
    if (ts.isIdentifier(name)) names.add(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name);
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.name) names.add(clause.name.text);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add(element.name.text);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) bind(declaration.name);
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement)) &&
      statement.name
    ) {
      names.add(statement.name.text);
    }
  }
  return names;
}

const preludeNames = (() => {
  const source = ts.createSourceFile(PRELUDE, ts.sys.readFile(PRELUDE)!, ts.ScriptTarget.ES2022, true);
  return [...declaredNames(source)].filter((name) =>
    new RegExp(`export (?:declare )?(?:const|interface|function|class) ${name}\\b`).test(source.text),
  );
})();

function snippet(block: CodeBlock, index: number): Snippet {
  const fileName = join(ROOT, '__tests__/docs/.snippets', `${block.file.replace(/[/.]/g, '_')}_${index}.ts`);
  const source = ts.createSourceFile(fileName, block.code, ts.ScriptTarget.ES2022, true);
  const own = declaredNames(source);
  const borrowed = block.marker === 'standalone' ? [] : preludeNames.filter((name) => !own.has(name) && new RegExp(`\\b${name}\\b`).test(block.code));
  const header = borrowed.length ? `import { ${borrowed.join(', ')} } from ${JSON.stringify(PRELUDE.replace(/\.ts$/, '.js'))};\n` : '';
  // `export {}` makes every snippet a module of its own, so their top-level names never collide.
  return { block, fileName, offset: header ? 1 : 0, text: `${header}${block.code}\nexport {};\n` };
}

const blocks = markdownFiles()
  .filter((file) => file === 'README.md' || file.startsWith('docs/'))
  .flatMap(codeBlocks)
  .filter((block) => block.lang === 'ts' || block.lang === 'typescript');
const snippets = blocks.filter((block) => block.marker !== 'skip').map(snippet);

function typecheck(all: readonly Snippet[]): string[] {
  const byName = new Map(all.map((s) => [s.fileName, s]));
  const host = ts.createCompilerHost(OPTIONS, true);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => byName.get(name)?.text ?? readFile(name);
  host.fileExists = (name) => byName.has(name) || fileExists(name);
  host.getSourceFile = (name, language, onError, create) => {
    const own = byName.get(name);
    return own ? ts.createSourceFile(name, own.text, language, true) : getSourceFile(name, language, onError, create);
  };
  const program = ts.createProgram([...byName.keys()], OPTIONS, host);
  const problems: string[] = [];
  for (const source of program.getSourceFiles()) {
    const own = byName.get(source.fileName);
    if (!own) continue;
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const at = own.block.line + line - own.offset;
      problems.push(`${own.block.file}:${at}: TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`);
    }
  }
  return problems;
}

// Express plays no part: once, in the express5 project.
(EXPRESS_MAJOR === 5 ? describe : describe.skip)('documentation snippets', () => {
  it('finds the TypeScript blocks, and skips few of them', () => {
    expect(snippets.length).toBeGreaterThan(20);
    expect(blocks.length - snippets.length).toBeLessThanOrEqual(3);
  });

  it('the README quick start is standalone: it names everything it uses', () => {
    expect(codeBlocks('README.md').some((block) => block.marker === 'standalone' && /wellKnownCard/.test(block.code))).toBe(true);
  });

  it('every TypeScript block typechecks under strict against lib/', () => {
    expect(typecheck(snippets)).toEqual([]);
  }, 120_000);
});
