// How a small file is read whole into a buffer of its own, on the main thread
// (targets/local/local-target.ts readSmallFileHere, async) and on a compute thread
// (compute/file-work.ts read, sync): one read of the size lstat gave plus a byte to notice
// growth, more only if it grew. Built-ins only: the compute threads' bundle takes it too.

/** A buffer for a file of `expectedSize` bytes, at the start of an ArrayBuffer of its own (it may move to another thread). */
export function wholeFileBuffer(expectedSize: number): Buffer {
  return Buffer.allocUnsafeSlow(expectedSize + 1);
}

/** `buffer` when it has room after `filled` bytes, else a copy of it twice as large (the file grew). */
export function withRoom(buffer: Buffer, filled: number): Buffer {
  if (filled < buffer.length) return buffer;
  const grown = Buffer.allocUnsafeSlow(buffer.length * 2);
  buffer.copy(grown);
  return grown;
}

/** Whether a read that got `got` bytes, leaving `filled` of `buffer`, was the last: a regular file reads short only at its end. */
export function readToEnd(got: number, filled: number, buffer: Buffer): boolean {
  return got === 0 || filled < buffer.length;
}
