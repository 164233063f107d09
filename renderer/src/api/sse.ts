// Server-Sent Events over fetch. EventSource cannot send an Authorization header, so the
// jobs stream is read with fetch and parsed here, following the WHATWG event-stream rules
// (fields, multi-line data, comments, CR/LF/CRLF line ends, dispatch on a blank line).

export interface SseMessage {
  event: string;
  data: string;
  id: string | null;
}

/** Feed decoded text chunks in any split; complete messages come out through `onMessage`. */
export function createSseParser(onMessage: (message: SseMessage) => void) {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let lastId: string | null = null;
  let pendingCR = false;

  function line(text: string): void {
    if (text === '') {
      if (data.length > 0) onMessage({ event: event || 'message', data: data.join('\n'), id: lastId });
      event = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return; // comment / keep-alive
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) lastId = value;
    // "retry" and unknown fields are ignored
  }

  return {
    push(chunk: string): void {
      let text = chunk;
      // a CRLF split across two chunks: the LF belongs to the CR already handled
      if (pendingCR && text.startsWith('\n')) text = text.slice(1);
      pendingCR = false;
      buffer += text;
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const ch = buffer[i];
        if (ch === '\n' || ch === '\r') {
          line(buffer.slice(start, i));
          if (ch === '\r') {
            if (i + 1 < buffer.length) {
              if (buffer[i + 1] === '\n') i++;
            } else {
              pendingCR = true;
            }
          }
          start = i + 1;
        }
      }
      buffer = buffer.slice(start);
    },
  };
}

export interface StreamOptions {
  url: string;
  headers: Record<string, string>;
  signal: AbortSignal;
  onMessage: (message: SseMessage) => void;
  /** called each time the stream (re)opens, so the caller can catch up on what it missed */
  onOpen?: () => void;
  onError?: (error: unknown) => void;
  fetchImpl?: typeof fetch;
  /** delays between reconnects, in ms; the last one repeats */
  backoff?: number[];
}

/** Reads the stream until aborted, reconnecting with backoff when it drops. */
export async function streamSse(options: StreamOptions): Promise<void> {
  const doFetch = options.fetchImpl ?? fetch;
  const backoff = options.backoff ?? [500, 1000, 2000, 5000];
  let attempt = 0;
  while (!options.signal.aborted) {
    try {
      const response = await doFetch(options.url, {
        headers: { Accept: 'text/event-stream', ...options.headers },
        signal: options.signal,
        cache: 'no-store',
      });
      if (!response.ok || !response.body) throw new Error(`The job stream answered ${response.status}.`);
      attempt = 0;
      options.onOpen?.();
      const parser = createSseParser(options.onMessage);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
      }
    } catch (error) {
      if (options.signal.aborted) return;
      options.onError?.(error);
    }
    const delay = backoff[Math.min(attempt, backoff.length - 1)] ?? 1000;
    attempt++;
    await sleep(delay, options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
