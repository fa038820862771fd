// The addon must load on machines that only record (a GPU host) or run the
// packaged app, where Debian's libsimdjson (the JSON importer's parser) is
// not installed: its only shared library beyond the C runtime travels with
// it, found through its run path ($ORIGIN). native/build.sh puts it there.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');
const release = path.join(repo, 'native/addon/build/Release');
const addon = path.join(release, 'streamscope_addon.node');
// What every Linux machine with a C++ runtime has.
const SYSTEM = /^(linux-vdso|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux[^ ]*)\.so/;

describe('the addon carries its libraries', () => {
  it('resolves every library beyond the C runtime from its own folder', () => {
    const lines = execFileSync('ldd', [addon], { encoding: 'utf8' }).trim().split('\n');
    const own = lines.map((l) => l.trim()).filter((l) => !SYSTEM.test(l) && !l.startsWith('/'));
    expect(own.length).toBeGreaterThan(0); // simdjson, at least
    for (const l of own) {
      const [name, , where] = l.split(/\s+/);
      expect(where, l).toBeDefined();
      expect(path.dirname(fs.realpathSync(where!)), `${name} must be found beside the addon`).toBe(fs.realpathSync(release));
    }
  });

  it('the packaged app takes those libraries with the addon (electron-builder.yml, as electron-builder reads and validates it)', async () => {
    // Its package entry first: its modules import each other in a cycle.
    await import('app-builder-lib');
    const { getConfig, validateConfiguration } = (await import('app-builder-lib/out/util/config/config.js')) as unknown as {
      getConfig: (projectDir: string, configPath: string | null, configFromOptions: null) => Promise<Record<string, unknown>>;
      validateConfiguration: (config: unknown, debugLogger: unknown) => Promise<void>;
    };
    const config = (await getConfig(repo, null, null)) as { extraResources: { from: string; to: string; filter?: string[] }[] };
    const { DebugLogger } = (await import('builder-util/out/DebugLogger.js')) as unknown as { DebugLogger: new (enabled: boolean) => unknown };
    await validateConfiguration(config, new DebugLogger(false));
    const beside = config.extraResources.filter((r) => r.from === 'native/addon/build/Release' && r.to === 'native');
    const libs = fs.readdirSync(release).filter((f) => /\.so\.\d+$/.test(f));
    expect(libs.length).toBeGreaterThan(0);
    const glob = (g: string) => new RegExp(`^${g.replace(/\./g, '\\.').replace(/\*/g, '.*')}$`);
    for (const f of libs)
      expect(
        beside.some((r) => r.filter?.some((g) => glob(g).test(f))),
        f,
      ).toBe(true);
  });
});
