// The recent-files list, persisted in the app's userData folder.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RECENT_FILES_NAME, RecentFiles } from '../../app/recent-files.ts';
import { tempDir } from '../helpers/native.ts';

describe('RecentFiles', () => {
  it('keeps the most recent first, without duplicates, bounded, across restarts', () => {
    const dir = tempDir('recent');
    const r = new RecentFiles(dir, 3);
    expect(r.list()).toEqual([]);
    r.add('/a.sqlite');
    r.add('/b.sqlite');
    r.add('/a.sqlite');
    expect(r.list()).toEqual(['/a.sqlite', '/b.sqlite']);
    r.add('/c.sqlite');
    r.add('/d.sqlite');
    expect(r.list()).toEqual(['/d.sqlite', '/c.sqlite', '/a.sqlite']);
    // A new instance (the next app start) reads the same list.
    expect(new RecentFiles(dir, 3).list()).toEqual(['/d.sqlite', '/c.sqlite', '/a.sqlite']);
    r.remove('/c.sqlite');
    expect(new RecentFiles(dir, 3).list()).toEqual(['/d.sqlite', '/a.sqlite']);
    r.clear();
    expect(new RecentFiles(dir, 3).list()).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([RECENT_FILES_NAME]); // no temporary files left
  });

  it('stores absolute paths', () => {
    const dir = tempDir('recent');
    const r = new RecentFiles(dir);
    r.add('relative.sqlite');
    expect(r.list()).toEqual([path.resolve('relative.sqlite')]);
  });

  it('a missing, corrupt or odd list is an empty one (and is replaced on the next add)', () => {
    const dir = tempDir('recent');
    const file = path.join(dir, RECENT_FILES_NAME);
    fs.writeFileSync(file, '{ not json');
    expect(new RecentFiles(dir).list()).toEqual([]);
    fs.writeFileSync(file, JSON.stringify({ files: ['/ok.sqlite', 42, 'relative', '/ok.sqlite'] }));
    expect(new RecentFiles(dir).list()).toEqual(['/ok.sqlite']);
    expect(new RecentFiles(path.join(dir, 'not-yet')).list()).toEqual([]);
    const r = new RecentFiles(path.join(dir, 'not-yet'));
    r.add('/x.sqlite');
    expect(new RecentFiles(path.join(dir, 'not-yet')).list()).toEqual(['/x.sqlite']);
  });
});
