/**
 * The fixed Lambda entries (infra/bundling.ts builds each one's asset; the constructs name them).
 * A module of its own so that what synth and the package's declarations read never reaches the
 * bundler.
 */
export type BundleKind =
  | 'meta'
  | 'data'
  | 'jobs'
  | 'authorizer'
  | 'maintenance-reconcile'
  | 'maintenance-orphans'
  | 'maintenance-sweep'
  | 'maintenance-index'
  | 'change-relay';
