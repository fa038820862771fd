// The Content-Security-Policy of the page, in both ways it is served: the
// desktop app's app:// protocol (app/protocol.ts) and browser mode's HTTP
// server (profiler/serve/server.ts). One policy: the same page runs in
// both, and it may load nothing but its own files — no inline script or
// style, no eval, no plugins, no framing, no forms, nothing remote. Styles
// set from script through the CSSOM (React's `style` prop, d3's
// `.style()`) are not inline styles in CSP's sense and keep working.
//
// The one difference is where the page's API calls go: in the desktop app
// over IPC (the preload's window.streamscope), so the page itself connects
// nowhere; in browser mode to POST /api/<method> on its own origin.
// Here because both app/ and profiler/serve/ may import the contract.

/** How the page reaches the API: the desktop app's IPC, or browser mode's HTTP. */
export type ApiTransport = 'ipc' | 'http';

export function contentSecurityPolicy(api: ApiTransport): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${api === 'http' ? "'self'" : "'none'"}`,
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-src 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
