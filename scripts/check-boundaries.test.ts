import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = path.resolve('scripts/check-boundaries.mjs');
let tree: string;

function file(relative: string, text: string) {
  const full = path.join(tree, relative);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
}

function check() {
  return spawnSync(process.execPath, [script, tree], { encoding: 'utf8' });
}

describe('layer boundary check', () => {
  afterEach(() => rmSync(tree, { recursive: true, force: true }));

  it('passes a tree that keeps the rules', () => {
    tree = mkdtempSync(path.join(os.tmpdir(), 'ferry-bounds-'));
    file('electron/core/a.ts', "import { x } from './b.js';\nimport fs from 'node:fs';\n// import 'electron' in a comment is fine\n");
    file('electron/server/s.ts', "import Fastify from 'fastify';\nimport { a } from '../core/a.js';\nimport { c } from '../core/capabilities.js';\n");
    file('renderer/src/App.tsx', "import { create } from 'zustand';\nimport type { Job } from '../../shared/api.js';\n");
    expect(check().status).toBe(0);
  });

  it.each([
    ['electron/core/x.ts', "import { app } from 'electron';", "imports 'electron'"],
    ['electron/core/x.ts', "import Fastify from 'fastify';", "imports 'fastify'"],
    ['electron/core/x.ts', "import multipart from '@fastify/multipart';", "imports '@fastify/multipart'"],
    ['electron/core/x.ts', "import { useState } from 'react';", "imports 'react'"],
    ['electron/core/x.ts', "export { routes } from '../server/routes.js';", 'electron/server is off limits'],
    ['electron/server/x.ts', "const { app } = require('electron');", "imports 'electron'"],
    ['electron/server/x.ts', "const m = await import('../main/index.js');", 'electron/main is off limits'],
    ['electron/server/routes/x.ts', "import { Library } from '../../core/targets/offline/library.js';", 'electron/core/targets is off limits'],
    ['electron/server/x.ts', "import type { LocalTarget } from '../core/targets/local/local-target.js';", 'electron/core/targets is off limits'],
    ['renderer/src/x.ts', "import { startFerry } from '../../electron/host.js';", 'electron is off limits'],
    ['shared/x.ts', "import fs from 'node:fs';", "imports 'node:fs'"],
  ])('fails %s with %s', (where, code, message) => {
    tree = mkdtempSync(path.join(os.tmpdir(), 'ferry-bounds-'));
    file(where, `${code}\n`);
    const result = check();
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
  });
});
