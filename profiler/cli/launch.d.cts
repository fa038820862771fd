// Types of launch.cjs (the `streamscope` command), for the build that stamps
// the bundle (app/vite.config.ts), its tests and the start-up bench.

/** What the bundle's stamp says of it: run `entry`, or why the sources must run. */
export type BundleState = { current: true; entry: string } | { current: false; reason: string };

/** Whether the bundle in `distDir` (default ROOT/app/dist) was built from the sources under `root` as they are now. */
export function bundleState(root: string, distDir?: string): BundleState;

/**
 * Writes the stamp of a build into `distDir`: `files` maps each source (relative to `root`, with /) to the SHA-256 of the content bundled.
 * Returns the sources that changed during the build (the bundle counts as stale until built again).
 */
export function writeStamp(root: string, distDir: string, files: Record<string, string>): string[];

export const STAMP_FILE: string;
export const ENTRY_FILE: string;

/** Runs the CLI of the checkout at `root` on this process's arguments: the bundle in `distDir` (default ROOT/app/dist) where current, else the sources. */
export function launch(root: string, distDir?: string): void;

/** The glibc tunable streamscope.sh sets for a one-shot command (one malloc arena for all its threads). */
export const ONE_HEAP_TUNABLE: string;

/** Puts GLIBC_TUNABLES back as the user set it where streamscope.sh changed it (default: process.env). */
export function restoreUserTunables(env?: Record<string, string | undefined>): void;
