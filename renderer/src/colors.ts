// One colour per item kind, used by the canvas and mirrored by the legend's CSS classes (styles.css).
export const KIND_COLORS: Record<string, string> = {
  kernel: '#4e79a7', 'memcpy-h2d': '#59a14f', 'memcpy-d2h': '#e15759', 'memcpy-d2d': '#b07aa1', 'memcpy-peer': '#9c755f',
  'memcpy-other': '#bab0ac', memset: '#edc948', sync: '#ff9da7', api: '#76b7b2', nvtx: '#f28e2b',
};
