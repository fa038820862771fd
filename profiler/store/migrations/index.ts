// Ordered list of schema migrations. Each file is one schema version; a
// version is applied in its own transaction and sets PRAGMA user_version.
// Never edit a released migration: add the next one.
import type { Database } from 'better-sqlite3';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-stream-creator.ts';
import * as m0003 from './0003-zones.ts';
import * as m0004 from './0004-pcie-link.ts';
import * as m0005 from './0005-zone-busy.ts';
import * as m0006 from './0006-zone-shape.ts';
import * as m0007 from './0007-demangled-names.ts';
import * as m0008 from './0008-ranks.ts';
import * as m0009 from './0009-merge-sources.ts';
import * as m0010 from './0010-nvtx-payload.ts';
import * as m0011 from './0011-cpu-ops.ts';

export interface Migration {
  readonly version: number;
  readonly sql: string;
  /** What SQL alone cannot do (0007: demangling through the native addon); runs after `sql`, in the same transaction. */
  readonly run?: (db: Database) => void;
}

export const migrations: readonly Migration[] = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011];

for (let i = 0; i < migrations.length; i++) {
  if (migrations[i]!.version !== i + 1) {
    throw new Error(`schema migrations out of order: entry ${i} has version ${migrations[i]!.version}`);
  }
}

export const latestSchemaVersion = migrations.length;
