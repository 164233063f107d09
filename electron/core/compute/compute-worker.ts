import { parentPort } from 'node:worker_threads';
import { answerBag } from './bag-work.js';
import { answerFiles } from './file-work.js';
import { answerHash } from './hash-work.js';
import type { FromCompute, ToCompute } from './messages.js';

// The entry of Ferry's compute threads: a real module, type-checked with the rest, bundled
// into one script (compute/worker-source.ts) that each thread evaluates. What it imports is
// node built-ins and small pure modules only (the ZIP record writer, the compression
// sampler), so its bundle stays a few KiB and a thread starts in milliseconds.
//
// One message type each way (messages.ts); `kind` says which pool's work it is. The pools
// share the threads (compute/compute-threads.ts), so any kind may come to any thread, and each
// is answered in the order it arrived.

const port = parentPort!;
const reply = (message: FromCompute, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

port.on('message', (m: ToCompute) => {
  switch (m.kind) {
    case 'files': {
      const { replies, moved } = answerFiles(m.batch);
      reply({ kind: 'files', replies }, moved);
      return;
    }
    case 'hash':
      answerHash(m, reply);
      return;
    case 'bag':
      answerBag(m, reply);
      return;
  }
});
