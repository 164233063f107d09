// The layer rules of ARCHITECTURE.md, checked on every import of every source file:
//   electron/core    never imports electron, the HTTP framework, UI code, or server/main/preload
//   electron/server  never imports electron, main or preload, or the renderer, nor any one
//                    target (electron/core/targets/): it sees targets through the Target
//                    interface, their capabilities and core's ports (target.ts, download-library.ts)
//   renderer/        never imports anything under electron/
//   shared/          pure: no Node built-ins, no electron/, no renderer/
//   electron/core/zip  the ZIP format only (reading, the entry policy, writing): never imports
//                      electron/core/bag, which builds BagIt on top of it
// Usage: node scripts/check-boundaries.mjs [root]   (exit 1 and a list when broken)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? '.');

const RULES = [
  {
    layer: 'electron/core',
    packages: [/^electron$/, /^electron\//, /^fastify$/, /^@fastify\//, /^react$/, /^react-dom/, /^react\//, /^zustand/],
    folders: ['electron/server', 'electron/main', 'electron/preload', 'renderer'],
  },
  {
    layer: 'electron/server',
    packages: [/^electron$/, /^electron\//, /^react/, /^zustand/],
    folders: ['electron/main', 'electron/preload', 'renderer', 'electron/core/targets'],
  },
  { layer: 'renderer', packages: [/^electron$/, /^electron\//, /^fastify/, /^@fastify\//], folders: ['electron'] },
  { layer: 'electron/core/zip', packages: [], folders: ['electron/core/bag'] },
  { layer: 'shared', packages: [/^node:/, /^electron/, /^fastify/, /^fs$/, /^path$/], folders: ['electron', 'renderer'] },
];

const IMPORT = /(?:^|[^.\w])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[^.\w])import\s*['"]([^'"]+)['"]|(?:^|[^.\w])(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;

function* sourceFiles(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) yield* sourceFiles(full);
    else if (/\.(c|m)?(t|j)sx?$/.test(name) && !/\.d\.ts$/.test(name)) yield full;
  }
}

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const problems = [];
for (const rule of RULES) {
  for (const file of sourceFiles(path.join(root, rule.layer))) {
    const text = stripComments(readFileSync(file, 'utf8'));
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      const relativeFile = path.relative(root, file);
      if (specifier.startsWith('.')) {
        const resolved = path.relative(root, path.resolve(path.dirname(file), specifier)).split(path.sep).join('/');
        const bad = rule.folders.find((folder) => resolved === folder || resolved.startsWith(`${folder}/`));
        if (bad) problems.push(`${relativeFile}: imports '${specifier}' (${bad} is off limits for ${rule.layer})`);
      } else if (rule.packages.some((pattern) => pattern.test(specifier))) {
        problems.push(`${relativeFile}: imports '${specifier}' (not allowed in ${rule.layer})`);
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`Layer boundaries broken (see ARCHITECTURE.md):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('Layer boundaries hold.');
