// Preload for the MCP conformance CLI: adds `Authorization: Bearer $MCP_CONFORMANCE_BEARER` to every
// HTTP request the suite makes. The CLI has no header option; its requests go out through
//   - globalThis.fetch (the TypeScript SDK's Streamable HTTP client and the SSE scenarios' raw calls)
//   - undici's request() (scenario dns-rebinding-protection), imported from the npm `undici` package;
//   - node:http's request() (the raw header scenarios, http-header-validation and its kin).
// Usage: NODE_OPTIONS="--require /path/conformance-bearer.cjs" MCP_CONFORMANCE_BEARER=token node .../dist/index.js server ...
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const token = process.env.MCP_CONFORMANCE_BEARER;
if (token) {
  const value = `Bearer ${token}`;

  // 1. fetch: wrap the global, which the SDK and the scenarios look up at call time.
  const originalFetch = globalThis.fetch;
  globalThis.fetch = function fetchWithBearer(input, init) {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!headers.has('authorization')) headers.set('authorization', value);
    return originalFetch(input, { ...init, headers });
  };

  // 2. undici.request: replace the CommonJS export before the CLI's ESM bundle imports it (the
  //    import then reads the patched property). Resolved from the CLI script, so it is the same
  //    undici copy the CLI loads.
  try {
    const script = fs.realpathSync(process.argv[1]);
    const undici = require(require.resolve('undici', { paths: [path.dirname(script)] }));
    const originalRequest = undici.request;
    undici.request = function requestWithBearer(url, options = {}) {
      const headers = { ...(options.headers ?? {}) };
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) {
        headers.authorization = value;
      }
      return originalRequest.call(this, url, { ...options, headers });
    };
  } catch {
    // No undici next to the script: nothing but fetch to cover.
  }

  // 3. http.request(options, callback): the CLI imports the module's default export, this same
  //    object, so the patched property is what it calls.
  const http = require('node:http');
  const originalHttpRequest = http.request;
  http.request = function httpRequestWithBearer(options, ...rest) {
    if (options && typeof options === 'object' && !(options instanceof URL)) {
      const headers = { ...(options.headers ?? {}) };
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) {
        headers.authorization = value;
      }
      options = { ...options, headers };
    }
    return originalHttpRequest.call(this, options, ...rest);
  };
}
