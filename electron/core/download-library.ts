import { PassThrough, type Readable } from 'node:stream';

// The offline library ("Downloaded ZIPs") as the rest of Ferry sees it: a port, so the HTTP
// layer keeps a copy of a download without importing the offline target, whose Library
// (targets/offline/library.ts) implements it.

export interface DownloadLibrary {
  /**
   * A copy of a download kept in the library: bytes go to a hidden temporary name and are
   * renamed to `<baseName>.zip` (or `<baseName> (2).zip`, ...) only when complete, so a
   * half-downloaded archive never appears.
   */
  keep(baseName: string): Promise<KeptCopy>;
  /** Removes hidden partial copies whose writing process is gone; returns how many. Run at start. */
  sweep(): Promise<number>;
}

/** Pipe the download into `stream`; call `commit` after it ended, or `abort` when it failed. */
export interface KeptCopy {
  stream: PassThrough;
  /** the kept archive's file name */
  commit(): Promise<string>;
  abort(error?: Error): Promise<void>;
}

/** Sends `source` both to the caller and into the library; the copy is kept only if whole. */
export function teeIntoLibrary(source: Readable, copy: KeptCopy, onKept?: (name: string) => void): Readable {
  const out = new PassThrough();
  source.on('data', (chunk: Buffer) => {
    const okOut = out.write(chunk);
    const okCopy = copy.stream.write(chunk);
    if (!okOut || !okCopy) {
      source.pause();
      let waiting = (okOut ? 0 : 1) + (okCopy ? 0 : 1);
      const resume = () => {
        if (--waiting === 0) source.resume();
      };
      if (!okOut) out.once('drain', resume);
      if (!okCopy) copy.stream.once('drain', resume);
    }
  });
  let ended = false;
  source.on('end', () => {
    ended = true;
    copy.stream.end();
    copy.commit().then((name) => onKept?.(name), () => copy.abort());
    out.end();
  });
  source.on('error', (error) => {
    void copy.abort(error);
    out.destroy(error);
  });
  source.on('close', () => {
    if (!ended) void copy.abort();
  });
  out.on('close', () => {
    if (!out.writableFinished) source.destroy();
  });
  return out;
}
