import type http from 'node:http';
import { pipeline, Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fastPathOn } from '../fast-paths.js';
import type { BodyFailures } from './body-guard.js';

/**
 * An answer that came over `node:http` (streamed-request.ts), as the fetch `Response` the rest
 * of RemoteClient reads, with its body kept a Node stream until someone asks for it as a web
 * stream (fast path `direct-requests`).
 *
 * Why: fetch's way with a body (a web ReadableStream, and, for a download, a Node stream made
 * from it again) cost several times the CPU of the bytes themselves for the many small files
 * of a folder, and left garbage enough to keep V8's collector busy (docs/performance.md,
 * "Direct requests"). A download (`bodyStream`) takes the answer's own `IncomingMessage`,
 * guarded against stalls and breaks at the Node level; `response.json()`, `text()` and
 * `body` still work, through a web stream made only when first read.
 *
 * Invariant: an answer's bytes flow out one way only, the first one asked for: the Node stream
 * (`bodyStream`) or the web stream (`response.body`, `json()`, `text()`). The second way then
 * finds the body taken (an empty Node stream; an errored web stream).
 */
interface HeldBody {
  /** the answer's body while nobody took it; replaced by its guarded form (guardNodeBody) */
  stream: Readable | null;
}


// statuses a Response may not carry a body with (fetch's null body statuses)
const NULL_BODY = new Set([101, 204, 205, 304]);

/** The answer as a fetch Response, its body streamed (held as a Node stream with `direct-requests`). */
export function responseOf(answer: http.IncomingMessage, target: URL, method: string): Response {
  const headers = new Headers();
  const raw = answer.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const status = answer.statusCode ?? 502;
  const init = { status, statusText: answer.statusMessage ?? '', headers };
  let response: Response;
  if (NULL_BODY.has(status)) {
    answer.resume();
    response = new Response(null, init);
  } else if (fastPathOn('direct-requests')) {
    // a HEAD's answer has no body to inflate, whatever its headers say (as undici)
    const held: HeldBody = { stream: method === 'HEAD' ? answer : decoded(answer, headers.get('content-encoding')) };
    response = new HeldAnswer(held, init);
  } else {
    response = new Response(Readable.toWeb(answer) as unknown as ReadableStream<Uint8Array>, init);
  }
  Object.defineProperty(response, 'url', { value: target.toString() });
  return response;
}

/**
 * The answer's body with its content codings undone, as fetch undoes them (undici: the codings
 * listed, last applied first; gzip, x-gzip, deflate and br; one it does not know leaves the
 * body as it came), so that a body reads the same whichever way the request went.
 */
function decoded(answer: Readable, contentEncoding: string | null): Readable {
  if (!contentEncoding) return answer;
  const decoders: Transform[] = [];
  for (const coding of contentEncoding.toLowerCase().split(',').map((part) => part.trim()).reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') decoders.push(zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    else if (coding === 'deflate') decoders.push(zlib.createInflate({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    else if (coding === 'br') decoders.push(zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }));
    else if (coding !== 'identity' && coding !== '') return answer;
  }
  if (decoders.length === 0) return answer;
  // an error anywhere (the connection, a damaged coding) destroys the last stream with it
  return pipeline([answer, ...decoders] as unknown as [Readable, Transform], () => undefined) as unknown as Readable;
}

/**
 * The body of `response` as a Node stream: the answer's own when it came over `node:http` and
 * nobody read it yet, else one made from its web body (an empty stream for none).
 */
export function bodyStream(response: Response): Readable {
  const held = HeldAnswer.heldOf(response);
  if (held) {
    const stream = held.stream ?? Readable.from([]);
    held.stream = null;
    return stream;
  }
  return response.body ? Readable.fromWeb(response.body as unknown as WebReadableStream) : Readable.from([]);
}

/** Whether `response` came over node:http with its body held as a Node stream (taken or not): asking it for `body` would make a web stream. */
export function holdsNodeBody(response: Response): boolean {
  return HeldAnswer.heldOf(response) !== undefined;
}

/**
 * Guards a held Node body as body-guard.ts's `guardBody` guards a web one; false when
 * `response` holds none (the caller guards its web body instead).
 */
export function guardNodeBody(response: Response, idleMs: number, failures: BodyFailures): boolean {
  const held = HeldAnswer.heldOf(response);
  if (!held) return false;
  if (held.stream) held.stream = new GuardedBody(held.stream, idleMs, failures);
  return true;
}

/**
 * A Response whose body is held as a Node stream, its web stream made only when first asked
 * for: most answers (a PUT's 201, a MOVE's) are taken as a Node stream or discarded, and a web
 * ReadableStream made for each of them cost ~15 µs of the main thread an answer (and garbage).
 * The reading methods the rest of Ferry (and the `webdav` client) call read that web stream,
 * as a Response's own do.
 */
class HeldAnswer extends Response {
  #web: ReadableStream<Uint8Array> | null = null;
  readonly #held: HeldBody;

  constructor(held: HeldBody, init: ResponseInit) {
    super(null, init);
    this.#held = held;
  }

  /** what `response` holds when it is one of these */
  static heldOf(response: Response): HeldBody | undefined {
    return #held in response ? response.#held : undefined;
  }

  /** the body as a web stream, made at the first ask */
  #body(): ReadableStream<Uint8Array> {
    return (this.#web ??= lazyWebBody(this.#held));
  }

  /** the body as a plain Response's, to read it with that Response's own methods */
  #read(): Response {
    return new Response(this.#body(), { headers: this.headers });
  }

  // Response declares these as properties (lib.dom), so they are replaced on the prototype
  // rather than overridden in the class body; each reads the held body as Response's own would.
  static {
    const reading = (read: (response: Response) => Promise<unknown>) => ({ configurable: true, value: function (this: HeldAnswer) { return read(this.#read()); } });
    Object.defineProperties(HeldAnswer.prototype, {
      body: { configurable: true, get(this: HeldAnswer) { return this.#body(); } },
      bodyUsed: { configurable: true, get(this: HeldAnswer) { return this.#web?.locked ?? false; } },
      arrayBuffer: reading((response) => response.arrayBuffer()),
      blob: reading((response) => response.blob()),
      formData: reading((response) => response.formData()),
      json: reading((response) => response.json()),
      text: reading((response) => response.text()),
      clone: { configurable: true, value: () => { throw new TypeError('An answer whose body is held as a Node stream cannot be cloned.'); } },
    });
  }
}

/**
 * A web stream over a held body, made to read nothing until it is read (a high-water mark of
 * 0: no pull before a read asks), so that a caller who takes the Node stream instead finds
 * every byte still there.
 */
function lazyWebBody(held: HeldBody): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Buffer> | null = null;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!chunks) {
          const stream = held.stream;
          held.stream = null;
          if (!stream) throw new TypeError('The answer body was already taken as a Node stream.');
          chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        }
        const { done, value } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel() {
        if (chunks) await chunks.return?.();
        held.stream?.destroy();
        held.stream = null;
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * `answer`, passed on chunk by chunk: a pause of `idleMs` while the reader waits for a chunk
 * (never while the reader is slow: the clock runs only between `_read` and the next chunk), or
 * a connection that breaks, ends it with the caller's clear error and lets the connection go.
 */
class GuardedBody extends Readable {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly answer: Readable,
    private readonly idleMs: number,
    private readonly failures: BodyFailures,
  ) {
    super();
    // paused before the 'data' listener, so the answer flows only when this stream is read
    answer.pause();
    answer.on('data', (chunk: Buffer) => {
      this.stopClock();
      if (!this.push(chunk)) answer.pause();
    });
    answer.once('end', () => {
      this.stopClock();
      this.push(null);
    });
    answer.once('error', (error) => this.destroy(failures.broken(error)));
    // a connection closed before the end without an error (older servers' half-sent answers)
    answer.once('close', () => {
      if (!answer.readableEnded && !this.destroyed) this.destroy(failures.broken(new Error('other side closed')));
    });
  }

  override _read(): void {
    this.timer ??= setTimeout(() => this.destroy(this.failures.stalled()), this.idleMs);
    this.answer.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stopClock();
    this.answer.destroy();
    callback(error);
  }

  private stopClock(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
