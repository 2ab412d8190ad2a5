/**
 * One shape per operation (issue 25, item 2; docs/architecture.md, "Where one operation's code
 * lives"): a handler in lib/operations decodes and validates its request and calls a typed
 * function of the layer that owns the behaviour. Nothing below the operations layer takes the
 * transport's shapes — an `OperationRequest`, its `URLSearchParams` query or a raw JSON body.
 *
 * Read with the TypeScript checker, so an alias (`type Json = Record<string, unknown>`) or an
 * indexed access (`OperationRequest['body']`) is seen for what it is. Exempt: lib/operations
 * (the decoders), lib/app (above it), and lib/http and lib/contract, which define and build the
 * request the decoders read.
 */
import path from 'node:path';
import { readdirSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const EXEMPT = ['lib/operations/', 'lib/app/', 'lib/http/', 'lib/contract/'];

/**
 * Files still taking raw input, each for a stated reason. The list only shrinks: an entry whose
 * file no longer has a finding fails the test, so it is removed when its file is fixed. Empty
 * since the data plane decodes in lib/operations/data too (issue 25 item 2, data part).
 */
const PENDING: Readonly<Record<string, string>> = {};

/** Parameter names that, typed as a bag of unknowns, are a request body or query passed down whole. */
const RAW_NAMES = /^(raw[A-Z]\w*|body|query|request|req|input)$/;

export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

function libFiles(root = 'lib'): string[] {
  return (readdirSync(root, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.posix.join(root, f.split(path.sep).join('/')));
}

/** An object type that is only a string index of unknown or any: what `JSON.parse` of a body is. */
function isBag(type: ts.Type, checker: ts.TypeChecker): boolean {
  if (type.isUnion()) return type.types.some((t) => isBag(t, checker));
  if (type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return true;
  const index = checker.getIndexInfoOfType(type, ts.IndexKind.String);
  if (!index || checker.getPropertiesOfType(type).length > 0) return false;
  return (index.type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) !== 0;
}

function mentionsTransport(type: ts.Type, node: ts.TypeNode | undefined): string | undefined {
  const text = node?.getText() ?? '';
  if (/\bOperationRequest\b/.test(text)) return 'OperationRequest';
  const names = (t: ts.Type): string[] => (t.isUnion() ? t.types.flatMap(names) : [t.getSymbol()?.getName() ?? '', t.aliasSymbol?.getName() ?? '']);
  const found = names(type).find((n) => n === 'OperationRequest' || n === 'URLSearchParams');
  return found ?? (/\bURLSearchParams\b/.test(text) ? 'URLSearchParams' : undefined);
}

/** A function's name, or the name of the variable or property it is assigned to. */
function nameOf(fn: ts.Node): string {
  const own = (fn as ts.SignatureDeclaration).name;
  if (own && ts.isIdentifier(own)) return own.text;
  const holder = fn.parent;
  if (holder && (ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder)) && ts.isIdentifier(holder.name)) return holder.name.text;
  return '(anonymous)';
}

/** Every parameter below the operations layer typed as the transport's request, query or raw body. */
export function findings(files: readonly string[]): Finding[] {
  const program = ts.createProgram(files as string[], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const out: Finding[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${file} is not in the program`);
    const visit = (node: ts.Node): void => {
      // An inline callback's parameters are whatever its caller passes (an array's items, …).
      if (ts.isParameter(node) && ts.isIdentifier(node.name) && !ts.isCallExpression(node.parent.parent)) {
        const type = checker.getTypeAtLocation(node);
        const name = node.name.text;
        const transport = mentionsTransport(type, node.type);
        const raw = !transport && RAW_NAMES.test(name) && isBag(type, checker);
        if (transport || raw) {
          const fnName = nameOf(node.parent);
          out.push({
            file,
            line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
            text: `${fnName}(${name}: ${checker.typeToString(type)})${transport ? ` — takes ${transport}` : ' — takes a raw body'}`,
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

const readable = (f: Finding) => `${f.file}:${f.line} ${f.text}`;

describe('one shape per operation', () => {
  const scanned = libFiles().filter((f) => !EXEMPT.some((prefix) => f.startsWith(prefix)));
  const all = findings(scanned);

  it('scans the layers below the operations', () => {
    expect(scanned).toContain('lib/catalog/control/projects.ts');
    expect(scanned).toContain('lib/governance/guard.ts');
    expect(scanned.some((f) => f.startsWith('lib/operations/'))).toBe(false);
  });

  it('finds no function below lib/operations that takes an OperationRequest, URLSearchParams or a raw body', () => {
    expect(all.filter((f) => PENDING[f.file] === undefined).map(readable)).toEqual([]);
  });

  it('keeps no stale exemption', () => {
    const stale = Object.keys(PENDING).filter((file) => !all.some((f) => f.file === file));
    expect(stale).toEqual([]);
  });

  it('can fail: it sees each kind of raw input, aliases and indexed access included', () => {
    const probe = findings(['test/unit/one-shape.probe.ts']).map((f) => f.text);
    expect(probe).toEqual([
      'byRequest(req: OperationRequest) — takes OperationRequest',
      'byBody(body: Readonly<Record<string, unknown>>) — takes OperationRequest',
      'byQuery(query: URLSearchParams) — takes URLSearchParams',
      'byAlias(body: Json) — takes a raw body',
      'byUnknown(rawValue: unknown) — takes a raw body',
    ]);
  });
});
