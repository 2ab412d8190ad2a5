/**
 * The construct library's entry point (docs/deploy.md, "Rask in your own CDK app"): the two
 * constructs, their props and the error a bad prop throws at synth.
 */
export { RaskCatalog, type RaskCatalogProps, type RaskCatalogSettings, type RaskScheduleSettings } from './catalog.js';
export { RaskCatalogState, type RaskCatalogStateProps, type RaskStateSettings, stateParameterName } from './catalog-state.js';
export { RaskConfigError, type RaskConfig } from './config.js';
