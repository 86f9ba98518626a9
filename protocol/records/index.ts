/**
 * Record batches v2 and legacy message sets: views, validation, splitting, building.
 * See batch.ts for the layout, produce.ts for what a broker checks on the produce path.
 */
export * from './batch.js';
export * from './builder.js';
export * from './control.js';
export * from './errors.js';
export * from './legacy.js';
export * from './produce.js';
export * from './record.js';
export * from './split.js';
export * from './scan.js';
export * from './validate.js';
