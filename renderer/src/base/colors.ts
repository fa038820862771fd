// One colour per item kind: the canvas, the legend (styles.css mirrors these
// as .k-<kind>) and the stats bars use the same table.
import type { ItemKind } from '../../../profiler/contract/api.ts';

export const KIND_COLORS: Record<ItemKind, string> = {
  kernel: '#3b75af',
  'memcpy-h2d': '#4a9a3f',
  'memcpy-d2h': '#d1495b',
  'memcpy-d2d': '#9467bd',
  'memcpy-peer': '#8c6d31',
  'memcpy-other': '#9a9a9a',
  memset: '#d4a017',
  sync: '#e377c2',
  api: '#5fa8a3',
  nvtx: '#ef8a3c',
};

export const KIND_LABELS: Record<ItemKind, string> = {
  kernel: 'Kernel',
  'memcpy-h2d': 'Memcpy HtoD',
  'memcpy-d2h': 'Memcpy DtoH',
  'memcpy-d2d': 'Memcpy DtoD',
  'memcpy-peer': 'Memcpy PtoP',
  'memcpy-other': 'Memcpy (other)',
  memset: 'Memset',
  sync: 'Synchronization',
  api: 'CUDA API',
  nvtx: 'NVTX range',
};

/** Start-up's hue, with the opacity each use wants: the rows lightly (draw.ts), the ruler's band more (Ruler.tsx). */
export const startupColor = (alpha: number) => `rgba(124, 108, 170, ${alpha})`;

export const ALL_KINDS = Object.keys(KIND_COLORS) as ItemKind[];

/** Kind filters of the search box: one entry may stand for several kinds. */
export const KIND_FILTERS: { id: string; label: string; kinds: ItemKind[] | undefined }[] = [
  { id: 'all', label: 'all kinds', kinds: undefined },
  { id: 'kernel', label: 'kernels', kinds: ['kernel'] },
  { id: 'memcpy', label: 'copies', kinds: ['memcpy-h2d', 'memcpy-d2h', 'memcpy-d2d', 'memcpy-peer', 'memcpy-other'] },
  { id: 'memcpy-h2d', label: 'HtoD', kinds: ['memcpy-h2d'] },
  { id: 'memcpy-d2h', label: 'DtoH', kinds: ['memcpy-d2h'] },
  { id: 'memset', label: 'memsets', kinds: ['memset'] },
  { id: 'sync', label: 'syncs', kinds: ['sync'] },
  { id: 'api', label: 'CUDA API', kinds: ['api'] },
  { id: 'nvtx', label: 'NVTX', kinds: ['nvtx'] },
];

/** Text colour that reads on a kind's fill. */
export const TEXT_ON_FILL = '#fff';
