import { encodeSegment as seg } from './keys.js';

/**
 * Registry keys of the principals, API keys and grants (same encoding rules as lib/registry/keys.ts):
 *
 *   principals/<N>                 principal N
 *   apikeys/<K>                    API key K (hash only)
 *   p/<P>/grants/<N>               every grant of principal N in project P
 *   quota/principals               the deployment's principals: usage under its quota (lib/catalog/quotas.ts)
 *   quota/keys/<N>                 principal N's unrevoked API keys: usage under its quota
 */
export const govKeys = {
  principalsPrefix: () => 'principals/',
  principal: (name: string) => `principals/${seg(name)}`,
  apiKeysPrefix: () => 'apikeys/',
  apiKey: (keyId: string) => `apikeys/${seg(keyId)}`,
  principalsQuota: () => 'quota/principals',
  keysQuota: (principal: string) => `quota/keys/${seg(principal)}`,
  grantsPrefix: (project: string) => `p/${seg(project)}/grants/`,
  grants: (project: string, principal: string) => `p/${seg(project)}/grants/${seg(principal)}`,
};
