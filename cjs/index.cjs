// `require('todeval')`: the package is ES modules (dist/src/index.js). Node 20.19+ and 22.12+ can
// require an ES module, and then this returns it; where Node cannot (an older Node, or
// --no-experimental-require-module), the error says what works instead of
// ERR_PACKAGE_PATH_NOT_EXPORTED or ERR_REQUIRE_ESM.
'use strict';
try {
  module.exports = require('../dist/src/index.js');
} catch (e) {
  if (!e || (e.code !== 'ERR_REQUIRE_ESM' && e.code !== 'ERR_REQUIRE_ASYNC_MODULE')) throw e;
  const error = new Error(
    "todeval is an ES module package (ESM only), and this Node cannot require() it: from CommonJS use `const todeval = await import('todeval');` (in an async function), or write your file as an ES module (.mjs, or \"type\": \"module\" in package.json)",
  );
  error.code = e.code;
  error.cause = e;
  throw error;
}
