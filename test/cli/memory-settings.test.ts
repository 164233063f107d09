// `ferry serve` starts its server with the memory settings (electron/launch/, issue #18): the
// launcher decides (memoryRelaunch), starts the server as its child with them, passes signals on,
// and never leaves the server running without it; FERRY_MEMORY_SETTINGS=off runs the server in
// the launcher's own process. The built CLI is what users and the bench run, so the process
// tests read the running server's /proc.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { electronMemorySettings, FEW_CORES, HEAP_GROWING_PERCENT, INTERRUPT_BUDGET, MALLOC_ARENA_MAX, memoryRelaunch, SEMI_SPACE_MIB, WASM_BASELINE_FLAGS } from '../../electron/launch/memory-settings.js';
import { builtCliAvailable, startFerryProcess, type FerryProcess } from '../support/ferry-process.js';

const SEMI_SPACE = `--max-semi-space-size=${SEMI_SPACE_MIB}`;
const HEAP_GROWING = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
const WASM = [...WASM_BASELINE_FLAGS];
const BUDGET = `--interrupt-budget=${INTERRUPT_BUDGET}`;
/** the unit tests decide for a machine of two cores (BUDGET added), unless they say otherwise */
const TWO = 2;

describe('memoryRelaunch: which settings the server starts with', () => {
  it('adds every setting, in front of node options already given', () => {
    expect(memoryRelaunch(['--import', 'tsx'], { PATH: '/bin' }, TWO)).toEqual({
      execArgv: [SEMI_SPACE, HEAP_GROWING, ...WASM, BUDGET, '--import', 'tsx'],
      env: { PATH: '/bin', MALLOC_ARENA_MAX },
    });
  });

  it('keeps a setting the user gave, in node options, NODE_OPTIONS or the environment', () => {
    expect(memoryRelaunch(['--max-semi-space-size=16'], {}, TWO)).toEqual({ execArgv: [HEAP_GROWING, ...WASM, BUDGET, '--max-semi-space-size=16'], env: { MALLOC_ARENA_MAX } });
    expect(memoryRelaunch([], { NODE_OPTIONS: '--max_semi_space_size=8' }, TWO)?.execArgv).toEqual([HEAP_GROWING, ...WASM, BUDGET]);
    expect(memoryRelaunch(['--heap-growing-percent=60'], {}, TWO)?.execArgv).toEqual([SEMI_SPACE, ...WASM, BUDGET, '--heap-growing-percent=60']);
    // the WebAssembly flags are kept as the user gave them, either way round (and no flag that only starts alike counts)
    expect(memoryRelaunch(['--wasm-dynamic-tiering', '--wasm-tier-up-filter=3'], {}, TWO)?.execArgv).toEqual([SEMI_SPACE, HEAP_GROWING, WASM[1], BUDGET, '--wasm-dynamic-tiering', '--wasm-tier-up-filter=3']);
    expect(memoryRelaunch(['--no_wasm_tier_up'], {}, TWO)?.execArgv).toEqual([SEMI_SPACE, HEAP_GROWING, WASM[0], BUDGET, '--no_wasm_tier_up']);
    expect(memoryRelaunch([], { MALLOC_ARENA_MAX: '4' }, TWO)).toEqual({ execArgv: [SEMI_SPACE, HEAP_GROWING, ...WASM, BUDGET], env: { MALLOC_ARENA_MAX: '4' } });
    // V8's compiler threshold as the user gave it
    expect(memoryRelaunch(['--interrupt_budget=100000'], {}, TWO)?.execArgv).toEqual([SEMI_SPACE, HEAP_GROWING, ...WASM, '--interrupt_budget=100000']);
  });

  it('leaves V8\'s compiler threshold at its default on a machine of more cores than FEW_CORES', () => {
    expect(memoryRelaunch([], {}, FEW_CORES + 1)?.execArgv).toEqual([SEMI_SPACE, HEAP_GROWING, ...WASM]);
    expect(memoryRelaunch([SEMI_SPACE, HEAP_GROWING, ...WASM], { MALLOC_ARENA_MAX }, FEW_CORES + 1)).toBeNull();
    expect(electronMemorySettings([], {}, FEW_CORES + 1)?.args).toEqual([`--js-flags=${[SEMI_SPACE, HEAP_GROWING, ...WASM].join(' ')}`]);
    expect(memoryRelaunch([], {}, 1)?.execArgv).toEqual([SEMI_SPACE, HEAP_GROWING, ...WASM, BUDGET]);
  });

  it('starts nothing when all are in place, the switch is off, or under the inspector', () => {
    expect(memoryRelaunch([SEMI_SPACE, HEAP_GROWING, ...WASM, BUDGET], { MALLOC_ARENA_MAX }, TWO)).toBeNull();
    expect(memoryRelaunch([SEMI_SPACE, HEAP_GROWING, ...WASM], { MALLOC_ARENA_MAX }, TWO)).not.toBeNull();
    expect(memoryRelaunch([SEMI_SPACE], { MALLOC_ARENA_MAX }, TWO)).not.toBeNull();
    expect(memoryRelaunch([], { FERRY_MEMORY_SETTINGS: 'off' }, TWO)).toBeNull();
    expect(memoryRelaunch([], { FERRY_MEMORY_SETTINGS: 'on' }, TWO)).not.toBeNull();
    // under the inspector the process the developer started serves (its port is taken)
    expect(memoryRelaunch(['--inspect=9230'], {}, TWO)).toBeNull();
    expect(memoryRelaunch([], { NODE_OPTIONS: '--inspect-brk' }, TWO)).toBeNull();
    expect(memoryRelaunch(['--inspector-nonexistent-option'], {}, TWO)).not.toBeNull();
  });

  it('refuses a value of the switch it does not know, with the values it takes', () => {
    expect(() => memoryRelaunch([], { FERRY_MEMORY_SETTINGS: 'no' }, TWO)).toThrow(/FERRY_MEMORY_SETTINGS is 'no'; it takes "on" \(or nothing\) or "off"/);
  });
});

describe('electronMemorySettings: the desktop app\'s Electron started with the same settings (npm start)', () => {
  it('puts V8\'s flag on Electron\'s command line and the arena limit in its environment', () => {
    expect(electronMemorySettings(['--inspect'], { PATH: '/bin' }, TWO)).toEqual({ args: [`--js-flags=${[SEMI_SPACE, HEAP_GROWING, ...WASM, BUDGET].join(' ')}`, '--inspect'], env: { PATH: '/bin', MALLOC_ARENA_MAX } });
  });

  it('leaves a user\'s own --js-flags and arena limit as given, and does nothing when off', () => {
    expect(electronMemorySettings(['--js-flags=--expose-gc'], {}, TWO)).toEqual({ args: ['--js-flags=--expose-gc'], env: { MALLOC_ARENA_MAX } });
    expect(electronMemorySettings(['--js-flags=--expose-gc'], { MALLOC_ARENA_MAX: '8' }, TWO)).toBeNull();
    expect(electronMemorySettings([], { FERRY_MEMORY_SETTINGS: 'off' }, TWO)).toBeNull();
  });
});

const reason = builtCliAvailable() ? null : 'out/main/cli.js is missing; `npm test` builds it first';
if (reason) console.warn(`Memory-settings launcher tests skipped: ${reason}`);

describe.skipIf(reason !== null)('node bin/ferry.js serve and its memory settings', () => {
  let dir: string;
  let running: FerryProcess | null = null;
  afterEach(async () => {
    if (running && running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGKILL');
    await running?.exited;
    running = null;
    await rm(dir, { recursive: true, force: true });
  });

  /** a built `ferry serve`, without any memory setting of the test's own environment */
  async function serve(env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<FerryProcess> {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-memory-'));
    await mkdir(path.join(dir, 'workspace'));
    const withoutSettings = { MALLOC_ARENA_MAX: undefined, NODE_OPTIONS: undefined, FERRY_MEMORY_SETTINGS: undefined };
    running = await startFerryProcess({ dataDir: path.join(dir, 'data'), workspace: path.join(dir, 'workspace'), built: true, env: { ...withoutSettings, ...env }, nodeArgs });
    return running;
  }
  const nodeOptionsOf = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((arg) => arg.startsWith('--max-semi-space-size') || arg.startsWith('--heap-growing-percent') || /^--no-wasm-/.test(arg) || arg.startsWith('--interrupt-budget'));
  /** this machine's: V8's compiler threshold only on few cores */
  const budget = os.availableParallelism() <= FEW_CORES ? [BUDGET] : [];
  const arenaMaxOf = async (pid: number) => (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').find((pair) => pair.startsWith('MALLOC_ARENA_MAX='));
  const parentOf = async (pid: number) => Number(/^PPid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]);

  it('runs the server as the launcher\'s child with every setting; a SIGTERM to the launcher stops it cleanly', async () => {
    const ferry = await serve({});
    expect(ferry.pid).not.toBe(ferry.child.pid);
    expect(await parentOf(ferry.pid)).toBe(ferry.child.pid);
    expect(await nodeOptionsOf(ferry.pid)).toEqual([SEMI_SPACE, HEAP_GROWING, ...WASM, ...budget]);
    expect(await arenaMaxOf(ferry.pid)).toBe(`MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX}`);
    const response = await fetch(new URL('api_v1/targets/', ferry.url), { headers: { authorization: `Bearer ${ferry.accessKey}` } });
    expect(response.status).toBe(200);
    ferry.child.kill('SIGTERM');
    expect(await ferry.exited).toBe(0);
    expect(ferry.output()).toContain('SIGTERM: stopping');
  });

  it('FERRY_MEMORY_SETTINGS=off: the server runs in the launcher\'s process, as node started it', async () => {
    const ferry = await serve({ FERRY_MEMORY_SETTINGS: 'off' });
    expect(ferry.pid).toBe(ferry.child.pid);
    expect(await nodeOptionsOf(ferry.pid)).toEqual([]);
    expect(await arenaMaxOf(ferry.pid)).toBeUndefined();
  });

  it('keeps the user\'s own semi-space size and adds only the others', async () => {
    const ferry = await serve({}, ['--max-semi-space-size=8']);
    expect(await nodeOptionsOf(ferry.pid)).toEqual([HEAP_GROWING, ...WASM, ...budget, '--max-semi-space-size=8']);
    expect(await arenaMaxOf(ferry.pid)).toBe(`MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX}`);
  });

  it('a SIGKILL of the launcher ends the server too (nothing keeps serving, or writing, without it)', async () => {
    const ferry = await serve({});
    ferry.child.kill('SIGKILL');
    expect(await ferry.exited).toBe('SIGKILL');
    const state = /^State:\s+(\S)/m.exec(await readFile(`/proc/${ferry.pid}/status`, 'utf8').catch(() => ''))?.[1];
    expect(state === undefined || state === 'Z' || state === 'X').toBe(true);
    await expect(fetch(new URL('api_v1/targets/', ferry.url))).rejects.toThrow();
  });
});
