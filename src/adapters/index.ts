export * from './types.js';
export * from './load.js';
export { bookingDomain } from './multiwoz.js';
export { loadSlotMap, mapSlot, type MultiwozSlotMap } from './multiwoz-slots.js';
