export * from './types.js';
export { loadRules, compileTemplate } from './load.js';
export { expandTurn, Expander, findRule } from './expand.js';
export { buildValueIndex, pickOther, valueKey, type ValueIndex } from './value-index.js';
export { rulesDir } from '../util/rules-dir.js';
