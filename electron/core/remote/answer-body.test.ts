import { describe, expect, it } from 'vitest';
import { discardBody } from './answer-body.js';

/** A body of `chunks` chunks of `size` bytes that records how far it was read and whether it was cancelled. */
function body(chunks: number, size: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled === chunks) return controller.close();
      seen.pulled++;
      controller.enqueue(new Uint8Array(size));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { response: new Response(stream, { status: 201 }), seen };
}

describe('discardBody', () => {
  it('reads a short answer to its end, so its connection can serve the next request', async () => {
    const { response, seen } = body(3, 100);
    await discardBody(response);
    expect(seen).toEqual({ pulled: 3, cancelled: false });
    expect(response.bodyUsed).toBe(true);
  });

  it('cancels an answer longer than the limit once it has read past it', async () => {
    const { response, seen } = body(100, 1024);
    await discardBody(response, 4 * 1024);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThan(10);
  });

  it('takes an answer with no body, and never throws for a body that fails', async () => {
    await discardBody(new Response(null, { status: 204 }));
    const failing = new Response(new ReadableStream({ pull: (controller) => controller.error(new Error('cut')) }), { status: 201 });
    await expect(discardBody(failing)).resolves.toBeUndefined();
  });
});
