// The emulator's download host against the real ndownloader exchange recorded in
// ../shared/reference/recordings/figshare/ndownloader-private-file.302.empty (a private file:
// 302 to S3, the link signed for 10 s), and the expiry it models.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recording } from '../shared/recordings.js';
import { startFigshareEmulator, type FigshareEmulator } from './emulator.js';

const real = recording('figshare', 'ndownloader-private-file.302.empty').meta!;
const realLocation = new URL(real.headers.Location![0]!);

describe('figshare emulator: downloads as recorded', () => {
  let emulator: FigshareEmulator;
  beforeAll(async () => {
    emulator = await startFigshareEmulator({ signedUrlSeconds: 0.3 });
  });
  afterAll(() => emulator.close());

  it('answers a private file with a 302 to a storage link signed for seconds, as recorded', async () => {
    const article = emulator.state.addArticle(1, 'Private', null, { 'file_0.txt': 'file_0' });
    const response = await fetch(`${emulator.downloadUrl}/files/${article.files[0]!.id}?token=figshare-token`, { redirect: 'manual' });
    expect(response.status).toBe(real.status);
    expect(response.headers.get('content-disposition')).toBe(real.headers['Content-Disposition']![0]);
    const location = new URL(response.headers.get('location')!);
    expect(location.origin).not.toBe(new URL(emulator.downloadUrl).origin);
    for (const key of ['X-Amz-Expires', 'X-Amz-Signature']) expect(location.searchParams.has(key) && realLocation.searchParams.has(key)).toBe(true);
    expect(realLocation.searchParams.get('X-Amz-Expires')).toBe('10');
    expect(await (await fetch(location)).text()).toBe('file_0');
    await new Promise((resolve) => setTimeout(resolve, 350));
    const expired = await fetch(location);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('Request has expired');
  });

  it('refuses a private file without the token', async () => {
    const article = emulator.state.addArticle(1, 'Private', null, { 'a.txt': 'a' });
    expect((await fetch(`${emulator.downloadUrl}/files/${article.files[0]!.id}`, { redirect: 'manual' })).status).toBe(403);
  });
});
