/** Input for test/unit/one-shape.test.ts: each function takes one kind of raw input, except the last three. */
import type { OperationRequest } from '../../lib/contract/request.js';

type Json = Record<string, unknown>;

export const byRequest = (req: OperationRequest) => req.id;
export const byBody = (body: OperationRequest['body']) => body.name;
export const byQuery = (query: URLSearchParams) => query.get('limit');
export const byAlias = (body: Json) => body.name;
export function byUnknown(rawValue: unknown) {
  return rawValue;
}
// An inline callback's parameter is its caller's business, not a door's input.
export const callback = () => [1].map((raw: unknown) => raw);
// Typed input passes, whatever its name.
export const typed = (input: { readonly name: string }, body: Buffer) => [input.name, body.length];
