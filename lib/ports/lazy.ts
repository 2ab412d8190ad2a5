/**
 * A port whose adapter is built on its first call. The Lambda entries use it for adapters whose
 * AWS SDK client only some requests need (the DynamoDB work queue, STS vending, the Lambda
 * inspector): with the bundles split (infra/bundling.ts), a dynamic `import()` in `build` keeps
 * that client out of the code a cold start loads and compiles.
 *
 * `methods` lists every method of the port — a `Record` over its keys, so a method added to the
 * port and forgotten here is a type error. Concurrent first calls share one build; a failed build
 * is retried by the next call.
 */
export function lazyPort<T extends object>(build: () => Promise<T>, methods: { readonly [K in keyof T]: true }): T {
  let inner: Promise<T> | undefined;
  const get = (): Promise<T> => {
    inner ??= build().catch((err: unknown) => {
      inner = undefined;
      throw err;
    });
    return inner;
  };
  const port: Record<string, unknown> = {};
  for (const name of Object.keys(methods)) {
    port[name] = async (...args: unknown[]) => {
      const target = (await get()) as Record<string, (...a: unknown[]) => unknown>;
      return target[name](...args);
    };
  }
  return port as T;
}
