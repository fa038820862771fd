// A worker thread that loads a recording's columns as an analysis does
// (analysis/load/columns.ts), for column-cache.test.ts: the server's
// analyses run on such threads.
import { parentPort, workerData } from 'node:worker_threads';
import { loadColumns } from '../../profiler/analysis/load/columns.ts';
import { exitWorkFinished } from '../../profiler/base/before-exit.ts';
import { openRecording } from '../../profiler/store/database.ts';

const db = openRecording((workerData as { file: string }).file, { readonly: true });
const columns = loadColumns(db);
db.close();
await exitWorkFinished();
parentPort!.postMessage({ ops: columns.ops.length, cached: columns.cache !== undefined });
