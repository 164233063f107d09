import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmuNode } from '../../../../test/emulators/osf/state.js';
import { fileNodeId, nodeId, storageId } from './ids.js';
import { entries, md5, osfFixture, writeOptions, type OsfFixture } from './test-helpers.js';

describe('OSF target: write (emulator over HTTP)', () => {
  let f: OsfFixture;
  let project: EmuNode;

  beforeEach(async () => {
    f = await osfFixture();
    project = f.emu.state.addNode({ title: 'Upload here', owner: f.userId });
    f.emu.state.addFile(project.id, '/data/same.txt', 'same bytes');
    f.emu.state.addFile(project.id, '/data/changed.txt', 'old bytes');
  });
  afterEach(() => f.emu.close());

  const fileAt = (node: string, materialized: string) =>
    [...f.emu.state.files.values()].find((file) => file.nodeId === node && f.emu.state.materializedPath(file) === materialized);

  it('uploads folders and files into a folder, creating what is missing', async () => {
    const data = fileAt(project.id, '/data/')!;
    const outcome = await f.target.write(
      f.ctx,
      fileNodeId(project.id, 'osfstorage', data.id),
      entries([
        { path: 'new', content: undefined },
        { path: 'new/a b+c.txt', content: 'plus and space' },
        { path: 'new/deep/x.bin', content: 'x'.repeat(5000), unknownSize: true },
        { path: 'top.txt', content: 'top' },
      ]),
      writeOptions('ignore'),
    );
    expect(outcome).toMatchObject({ created: ['new', 'new/a b+c.txt', 'new/deep', 'new/deep/x.bin', 'top.txt'], updated: [], ignored: [], fileErrors: [] });
    expect(fileAt(project.id, '/data/new/a b+c.txt')!.versions[0]!.bytes.toString()).toBe('plus and space');
    expect(fileAt(project.id, '/data/new/deep/x.bin')!.versions[0]!.md5).toBe(md5('x'.repeat(5000)));
    // WaterButler's answer to each upload is its record of the stored file, for the job to verify against
    expect(outcome.stored?.get('new/deep/x.bin')).toEqual({ hashes: { md5: md5('x'.repeat(5000)), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }, size: 5000 });
    expect([...(outcome.stored?.keys() ?? [])]).toEqual(['new/a b+c.txt', 'new/deep/x.bin', 'top.txt']);
    // each file one PUT with Content-Length, each folder one PUT, all with the token
    const puts = f.emu.state.requests.filter((r) => r.server === 'files' && r.method === 'PUT');
    expect(puts).toHaveLength(5);
    expect(puts.every((r) => r.authorization && r.status === 201)).toBe(true);
    expect(puts.some((r) => r.url.includes('name=a%20b%2Bc.txt'))).toBe(true);
  });

  it('ignore leaves existing files alone; update replaces only files whose md5 differs', async () => {
    const specs = (knownMd5: boolean) => [
      { path: 'data/same.txt', content: 'same bytes', knownMd5 },
      { path: 'data/changed.txt', content: 'new bytes', knownMd5 },
      { path: 'data/fresh.txt', content: 'fresh', knownMd5 },
    ];
    const ignored = await f.target.write(f.ctx, nodeId(project.id), entries(specs(false)), writeOptions('ignore'));
    expect(ignored).toMatchObject({ created: ['data/fresh.txt'], updated: [], ignored: ['data/same.txt', 'data/changed.txt'] });
    expect(fileAt(project.id, '/data/changed.txt')!.versions).toHaveLength(1);

    const updated = await f.target.write(f.ctx, storageId(project.id, 'osfstorage'), entries(specs(false)), writeOptions('update'));
    expect(updated).toMatchObject({ created: [], updated: ['data/changed.txt'], ignored: ['data/same.txt', 'data/fresh.txt'], fileErrors: [] });
    const changed = fileAt(project.id, '/data/changed.txt')!;
    expect(changed.versions).toHaveLength(2);
    expect(changed.versions[1]!.bytes.toString()).toBe('new bytes');
    expect(updated.stored?.get('data/changed.txt')).toMatchObject({ hashes: { md5: md5('new bytes') }, size: 9 });
    expect(fileAt(project.id, '/data/same.txt')!.versions).toHaveLength(1);

    // with md5 known up front nothing is opened for identical files
    let opened = 0;
    const again = await f.target.write(
      f.ctx,
      nodeId(project.id),
      entries(specs(true).map((spec) => ({ ...spec, onOpen: () => opened++ }))),
      writeOptions('update'),
    );
    expect(again.ignored).toEqual(['data/same.txt', 'data/changed.txt', 'data/fresh.txt']);
    expect(opened).toBe(0);
    // the API shows the new version: current_version 2, hashes recomputed
    const detail = await f.target.detail(f.ctx, fileNodeId(project.id, 'osfstorage', changed.id));
    expect(detail.extra.current_version).toBe(2);
    expect(detail.hashes.md5).toBe(md5('new bytes'));
  });

  it('creates a new private project at the top level, titled by the one top folder', async () => {
    const outcome = await f.target.write(
      f.ctx,
      null,
      entries([
        { path: 'My Study', content: undefined },
        { path: 'My Study/readme.md', content: '# hi' },
        { path: 'My Study/raw/r.csv', content: '1,2' },
      ]),
      writeOptions('ignore'),
    );
    expect(outcome.newResource).toMatchObject({ title: 'My Study', id: expect.stringMatching(/^n-[a-z0-9]+$/) });
    expect(outcome.created).toEqual(['My Study/readme.md', 'My Study/raw', 'My Study/raw/r.csv']);
    expect(outcome.fileErrors).toEqual([]);
    const guid = outcome.newResource!.id.slice(2);
    const node = f.emu.state.nodes.get(guid)!;
    expect(node).toMatchObject({ title: 'My Study', category: 'project', public: false, parent: null });
    expect(fileAt(guid, '/raw/r.csv')!.versions[0]!.bytes.toString()).toBe('1,2');
    // a second upload with the same title is a second project (OSF titles need not be unique)
    const second = await f.target.write(f.ctx, null, entries([{ path: 'My Study/readme.md', content: '# again' }]), writeOptions('ignore'));
    expect(second.newResource!.id).not.toBe(outcome.newResource!.id);
  });

  it("a new project takes a transfer's description and keywords; creators, licence and the rest are named in notes, not guessed", async () => {
    const outcome = await f.target.write(f.ctx, null, entries([{ path: 'Tide Gauges', content: undefined }, { path: 'Tide Gauges/a.csv', content: '1' }]), {
      ...writeOptions('ignore'),
      metadata: {
        title: 'Tide Gauges',
        description: 'Hourly sea level at three gauges.',
        keywords: ['tides', 'sea level'],
        creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097' }],
        license: 'CC-BY-4.0',
        funding: [{ funder: 'NERC' }],
      },
    });
    const node = f.emu.state.nodes.get(outcome.newResource!.id.slice(2))!;
    expect(node).toMatchObject({ title: 'Tide Gauges', description: 'Hourly sea level at three gauges.', tags: ['tides', 'sea level'], public: false });
    expect(outcome.notes).toEqual([
      expect.stringMatching(/^OSF lists contributors as OSF accounts, so the creators \(Ada Lovelace\) were not added/),
      expect.stringMatching(/the licence 'CC-BY-4.0' was not set; choose it in the project's Settings\.$/),
      'An OSF project holds no funding; the source\'s were not carried.',
    ]);
  });

  it('a file appearing between listing and upload (409) is ignored or updated per action', async () => {
    for (const action of ['ignore', 'update'] as const) {
      const name = `race-${action}.txt`;
      const outcome = await f.target.write(
        f.ctx,
        nodeId(project.id),
        entries([{ path: `data/${name}`, content: 'mine', onOpen: () => void (fileAt(project.id, `/data/${name}`) ?? f.emu.state.addFile(project.id, `/data/${name}`, 'theirs')) }]),
        writeOptions(action),
      );
      const stored = fileAt(project.id, `/data/${name}`)!;
      if (action === 'ignore') {
        expect(outcome).toMatchObject({ created: [], ignored: [`data/${name}`], fileErrors: [] });
        expect(stored.versions.map((v) => v.bytes.toString())).toEqual(['theirs']);
      } else {
        expect(outcome).toMatchObject({ created: [], updated: [`data/${name}`], fileErrors: [] });
        expect(stored.versions.map((v) => v.bytes.toString())).toEqual(['theirs', 'mine']);
      }
    }
    expect(f.emu.state.requests.some((r) => r.server === 'files' && r.status === 409)).toBe(true);
  });

  it('reports a 507 quota refusal per file and carries on', async () => {
    project.quotaBytes = f.emu.state.usedBytes(project.id) + 10;
    const outcome = await f.target.write(
      f.ctx,
      nodeId(project.id),
      entries([
        { path: 'big.bin', content: 'b'.repeat(100) },
        { path: 'small.txt', content: 'tiny' },
      ]),
      writeOptions('ignore'),
    );
    expect(outcome.created).toEqual(['small.txt']);
    expect(outcome.fileErrors).toEqual([{ path: 'big.bin', error: expect.stringMatching(/quota/i) }]);
  });

  it('waits out a 503 on an upload and sends the body again', async () => {
    f.emu.state.failNext({ path: '/providers/osfstorage/', server: 'files', method: 'PUT', status: 503, retryAfter: 1 });
    const outcome = await f.target.write(f.ctx, nodeId(project.id), entries([{ path: 'retry.txt', content: 'again' }]), writeOptions('ignore'));
    expect(outcome.created).toEqual(['retry.txt']);
    expect(fileAt(project.id, '/retry.txt')!.versions[0]!.bytes.toString()).toBe('again');
  });

  it('fails the job on 401 and on 403 (no write access)', async () => {
    const bad = { token: 'expired-token', signal: new AbortController().signal };
    await expect(f.target.write(bad, nodeId(project.id), entries([{ path: 'a.txt', content: 'a' }]), writeOptions())).rejects.toMatchObject({
      status: 401,
      message: expect.stringMatching(/the OSF token is invalid or expired/i),
    });
    const other = f.emu.state.addUser('Owner');
    const readOnly = f.emu.state.addNode({ title: 'Read only', owner: other.id });
    f.emu.state.addContributor(readOnly.id, f.userId, 'read');
    await expect(f.target.write(f.ctx, nodeId(readOnly.id), entries([{ path: 'a.txt', content: 'a' }]), writeOptions())).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    // a read-only token scope is refused the same way
    const readToken = f.emu.state.addToken(f.userId, ['osf.full_read']);
    await expect(
      f.target.write({ token: readToken, signal: new AbortController().signal }, nodeId(project.id), entries([{ path: 'a.txt', content: 'a' }]), writeOptions()),
    ).rejects.toMatchObject({ status: 403 });
  });

  it('refuses to upload into a file', async () => {
    const file = fileAt(project.id, '/data/same.txt')!;
    await expect(f.target.write(f.ctx, fileNodeId(project.id, 'osfstorage', file.id), entries([{ path: 'a.txt', content: 'a' }]), writeOptions())).rejects.toMatchObject({ status: 400 });
  });
});
