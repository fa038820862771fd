// A worker thread of `import` of many traces (import-many.ts): imports the
// traces it is given, one at a time, and answers each with what was imported
// or the problem, said of the trace or of its output.
import { parentPort } from 'node:worker_threads';
import { importOne, type ImportRequest } from './import-many.ts';

parentPort!.on('message', (request: ImportRequest) => {
  void importOne(request).then((answer) => parentPort!.postMessage(answer));
});
