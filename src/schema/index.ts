export * from './types.js';
export * from './schema-index.js';
export * from './sgd.js';
export * from './sgd-x.js';
