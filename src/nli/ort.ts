import { createRequire } from 'node:module';
import type * as Ort from 'onnxruntime-node';

let loaded: typeof Ort | undefined;

/**
 * onnxruntime-node, loaded on first use rather than at import. Its loading (the package's modules,
 * its 45 MB native library, the binding's registration) cost the main thread of every model-backed
 * command some 30 ms of CPU although the session runs on its own thread (session-thread.ts), which
 * loads it there. The same module object an `import` gives: the package is CommonJS, so both go
 * through Node's one require cache.
 */
export function ort(): typeof Ort {
  if (!loaded) {
    loaded = createRequire(import.meta.url)('onnxruntime-node') as typeof Ort;
    // ORT prints its own multi-line error when a provider fails to load; we report failures ourselves.
    if (!process.env.TODEVAL_DEBUG) loaded.env.logLevel = 'fatal';
  }
  return loaded;
}
