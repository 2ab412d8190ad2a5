/**
 * The policy files as Cedar's policy-set parts (no import of the rendered text: scripts/policy-text.ts
 * uses it to validate policies/ before rendering).
 */
/** Splits the policy files into policies keyed by their @id annotation; `?`-slots make templates. */
export function splitPolicyFiles(files: Readonly<Record<string, string>>) {
  const staticPolicies: Record<string, string> = {};
  const templates: Record<string, string> = {};
  for (const text of Object.values(files)) {
    for (const chunk of text.split(/(?=@id\(")/).filter((c) => c.includes('@id("'))) {
      const id = /@id\("([^"]+)"\)/.exec(chunk)![1];
      if (/\?(principal|resource)/.test(chunk)) templates[id] = chunk;
      else staticPolicies[id] = chunk;
    }
  }
  return { staticPolicies, templates };
}

