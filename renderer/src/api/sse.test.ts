import { describe, expect, it } from 'vitest';
import { createSseParser, streamSse, type SseMessage } from './sse.js';

function parseAll(chunks: string[]): SseMessage[] {
  const out: SseMessage[] = [];
  const parser = createSseParser((m) => out.push(m));
  for (const chunk of chunks) parser.push(chunk);
  return out;
}

describe('SSE parser', () => {
  it('reads named events with JSON data', () => {
    const messages = parseAll(['event: job\ndata: {"a":1}\n\n']);
    expect(messages).toEqual([{ event: 'job', data: '{"a":1}', id: null }]);
  });

  it('joins multi-line data, skips comments, defaults the event name', () => {
    const messages = parseAll([': keep-alive\n', 'data: one\ndata:two\n\n', 'id: 7\nevent: job\ndata: x\n\n']);
    expect(messages).toEqual([
      { event: 'message', data: 'one\ntwo', id: null },
      { event: 'job', data: 'x', id: '7' },
    ]);
  });

  it('handles any chunk split, including CRLF split between chunks', () => {
    const text = 'event: job\r\ndata: {"t":"1"}\r\n\r\nevent: job\rdata: {"t":"2"}\r\r';
    for (let cut = 1; cut < text.length; cut++) {
      const messages = parseAll([text.slice(0, cut), text.slice(cut)]);
      expect(messages.map((m) => m.data), `cut at ${cut}`).toEqual(['{"t":"1"}', '{"t":"2"}']);
    }
    // one character at a time
    expect(parseAll(text.split('')).length).toBe(2);
  });

  it('does not dispatch an event without data or before the blank line', () => {
    expect(parseAll(['event: job\n\n', 'data: half'])).toEqual([]);
  });
});

describe('streamSse', () => {
  it('sends the Authorization header, parses the body, and reconnects after the stream ends', async () => {
    const seen: string[] = [];
    const calls: RequestInit[] = [];
    const controller = new AbortController();
    let opens = 0;
    const fakeFetch = (async (_url: string, init: RequestInit) => {
      calls.push(init);
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(`event: job\ndata: {"n":${calls.length}}\n\n`));
          c.close();
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }) as unknown as typeof fetch;
    await streamSse({
      url: 'http://127.0.0.1:1/api_v1/jobs/events/',
      headers: { Authorization: 'Bearer k' },
      signal: controller.signal,
      fetchImpl: fakeFetch,
      backoff: [1],
      onOpen: () => opens++,
      onMessage: (m) => {
        seen.push(m.data);
        if (seen.length === 2) controller.abort();
      },
    });
    expect(seen).toEqual(['{"n":1}', '{"n":2}']);
    expect(opens).toBe(2);
    expect((calls[0]!.headers as Record<string, string>).Authorization).toBe('Bearer k');
  });

  it('reports an error status and retries', async () => {
    const controller = new AbortController();
    const errors: unknown[] = [];
    let n = 0;
    const fakeFetch = (async () => {
      n++;
      if (n >= 3) controller.abort();
      return new Response('no', { status: 503 });
    }) as unknown as typeof fetch;
    await streamSse({
      url: 'x',
      headers: {},
      signal: controller.signal,
      fetchImpl: fakeFetch,
      backoff: [1],
      onMessage: () => undefined,
      onError: (e) => errors.push(e),
    });
    expect(n).toBe(3);
    expect(errors.length).toBeGreaterThanOrEqual(2);
  });
});
