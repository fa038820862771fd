// The recent-files list (File ▸ Open Recent), persisted as JSON in the app's
// userData folder. Most recent first, no duplicates, bounded. A missing or
// unreadable list is an empty one: it is a convenience, never a reason to fail.
import fs from 'node:fs';
import path from 'node:path';

export const RECENT_FILES_NAME = 'recent-files.json';
export const RECENT_FILES_MAX = 12;

export class RecentFiles {
  readonly file: string;
  readonly max: number;
  #list: string[];

  constructor(userDataDir: string, max = RECENT_FILES_MAX) {
    this.file = path.join(userDataDir, RECENT_FILES_NAME);
    this.max = max;
    this.#list = RecentFiles.#read(this.file).slice(0, max);
  }

  static #read(file: string): string[] {
    try {
      const data = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
      const list = (data as { files?: unknown }).files;
      if (!Array.isArray(list)) return [];
      return [...new Set(list.filter((f): f is string => typeof f === 'string' && path.isAbsolute(f)))];
    } catch {
      return [];
    }
  }

  list(): string[] {
    return [...this.#list];
  }

  /** Moves (or adds) `file` to the top and saves. */
  add(file: string): string[] {
    const abs = path.resolve(file);
    this.#list = [abs, ...this.#list.filter((f) => f !== abs)].slice(0, this.max);
    this.#save();
    return this.list();
  }

  remove(file: string): string[] {
    const abs = path.resolve(file);
    this.#list = this.#list.filter((f) => f !== abs);
    this.#save();
    return this.list();
  }

  clear(): void {
    this.#list = [];
    this.#save();
  }

  /** Written to a temporary file and renamed, so a crash never leaves half a list. */
  #save(): void {
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify({ version: 1, files: this.#list }, null, 2) + '\n');
      fs.renameSync(tmp, this.file);
    } catch (err) {
      process.stderr.write(`streamscope: cannot save the recent-files list ${this.file}: ${(err as Error).message}\n`);
    }
  }
}
