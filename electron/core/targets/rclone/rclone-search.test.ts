import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rcloneUnavailableReason, writeRcloneConfig } from '../../../../test/rclone/servers.js';
import { collect, ctx } from '../../../../test/target-suite/test-entries.js';
import type { Target } from '../../target.js';
import { findRclone, startRcloneEngine, type RcloneEngine } from './index.js';

// An rclone remote has no index: search is a name match over one recursive operations/list.
const skip = rcloneUnavailableReason();

if (skip) {
  describe('rclone search', () => it.skip(`not run: ${skip}`, () => undefined));
} else {
  describe('rclone search', () => {
    let dir: string;
    let engine: RcloneEngine;
    let target: Target;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-search-'));
      const folder = path.join(dir, 'files');
      await mkdir(path.join(folder, 'Survey 2024', 'deep', 'er'), { recursive: true });
      await writeFile(path.join(folder, 'Survey 2024', 'deep', 'er', 'raw-SURVEY.csv'), 'x');
      await writeFile(path.join(folder, 'Survey 2024', 'notes.txt'), 'n');
      await writeFile(path.join(folder, 'other.txt'), 'o');
      const configPath = await writeRcloneConfig(dir, { scratch: { type: 'alias', remote: folder } });
      engine = await startRcloneEngine({ engine: 'local', binary: findRclone()!, configPath });
      target = (await engine.targets())[0]!;
    });

    afterAll(async () => {
      await engine?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('finds folders and files at any depth by name, case-insensitively, as the listing names them', async () => {
      const page = await target.search!(ctx('key'), { text: 'survey', page: 1 });
      expect(page).toMatchObject({ method: 'names', next: null });
      expect(page.nodes.map((n) => n.title).sort()).toEqual(['Survey 2024', 'raw-SURVEY.csv']);
      const listed = await collect(target.list(ctx('key')));
      for (const node of page.nodes) expect(listed).toContainEqual(node);
    });
  });
}
