// The memory settings `ferry serve` starts its server process with (issue #18, docs/performance.md,
// "Peak memory: the settings the server starts with"), and on a machine of two cores one for V8's
// optimizing compiler ("V8's optimizing compiler on two cores"). All are read only when a process starts
// (V8 takes its flags when the heap is made; glibc reads MALLOC_ARENA_MAX at its first
// allocation), so unlike a fast path they cannot be switched inside a running Ferry: the launcher
// (`launch/relaunch.ts`) starts the server as a child with them. This module only decides.
//
// FERRY_MEMORY_SETTINGS (read by the launcher, before the server starts):
//   unset, "" or "on"   the settings below, each only where the user has not set it already
//   "off"               the server runs in the launcher's own process, as Node started it

import os from 'node:os';

/** The switch's name, in the environment of `ferry serve`. */
export const MEMORY_SETTINGS_SWITCH = 'FERRY_MEMORY_SETTINGS';

/**
 * V8's young generation per semi-space, in MiB (Node 20's default grows to 16). With the arena
 * limit below, the bench's transfer group peaked at 270–275 MiB against 292–331 without, its
 * times within noise (docs/performance.md, "Peak memory").
 */
export const SEMI_SPACE_MIB = 4;

/**
 * How far V8 lets its old generation grow past what its last full collection found live, in
 * percent (left to itself, V8 picks a factor of up to 2 and more: a WebDAV transfer's heap went
 * from ~30 to ~80 MB of mostly dead request objects before a full collection). It was 30 while
 * the transfer group's peak was near 200 MiB; at 30 a stored-ZIP upload ran ~5 full collections
 * a round that freed little, and at 100 the round took 17 % less time and 18 % less CPU while
 * the group's peak went from 162 to 165 MiB (docs/performance.md, "The old generation let grow
 * again").
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * WebAssembly stays in V8's baseline compiler (Liftoff): no tier-up to TurboFan, neither when a
 * function turns hot (dynamic tiering) nor eagerly. The WebAssembly in the server is the HTTP
 * parser of Node's own fetch (undici's llhttp), and its tier-up compiles llhttp's large
 * functions in background threads whose compiler zones took 15–25 MiB at once: heaptrack of
 * the first WebDAV → local of a server (its 1,204 GETs are the first heavy use of fetch) put
 * TurboFan's WebAssembly zones at the top of the peak. With both flags that row's peak was
 * 174–186 MiB against 184–202, its time the same (docs/performance.md, "Peak memory: the HTTP
 * parser's WebAssembly kept in the baseline compiler").
 */
export const WASM_BASELINE_FLAGS = ['--no-wasm-dynamic-tiering', '--no-wasm-tier-up'] as const;

/** Machines of at most this many cores get INTERRUPT_BUDGET. */
export const FEW_CORES = 2;

/**
 * How much bytecode a function runs before V8 optimizes it with TurboFan, on a machine of
 * FEW_CORES or fewer: sixteen times V8 11.3's 67,584. TurboFan compiles on V8's platform threads,
 * beside the file-write threads and the main thread on two cores, and a transfer's per-file
 * functions (async functions resumed a few times a file) gain little from it: at V8's default it
 * took 0.5–0.8 s of CPU a local → local round while a server warmed up, at 4× 0.13–0.28 s, and at
 * 16× a round's CPU is another ~12 % less, its time 6–10 % (the functions a listing of 100,000
 * files or a download runs per row and per chunk are still optimized within their job; their
 * rows and the API's requests a second did not move). With more cores the compiler runs on idle
 * ones, and a function optimized later only costs: they keep V8's default (docs/performance.md,
 * "V8's optimizing compiler on two cores").
 */
export const INTERRUPT_BUDGET = 16 * 67_584;

interface V8Flag {
  flag: string;
  /** the user gave it already (or its --no- form): it is kept as given */
  given: RegExp;
}

/** V8's flags for the server: each added only where the user has not given that flag (or its --no- form) already. */
export const V8_MEMORY_FLAGS: readonly V8Flag[] = [
  { flag: `--max-semi-space-size=${SEMI_SPACE_MIB}`, given: /^--max[-_]semi[-_]space[-_]size(=|$)/ },
  { flag: `--heap-growing-percent=${HEAP_GROWING_PERCENT}`, given: /^--heap[-_]growing[-_]percent(=|$)/ },
  { flag: WASM_BASELINE_FLAGS[0], given: /^--(no[-_])?wasm[-_]dynamic[-_]tiering(=|$)/ },
  { flag: WASM_BASELINE_FLAGS[1], given: /^--(no[-_])?wasm[-_]tier[-_]up(=|$)/ },
];

const FEW_CORES_FLAGS: readonly V8Flag[] = [{ flag: `--interrupt-budget=${INTERRUPT_BUDGET}`, given: /^--interrupt[-_]budget(=|$)/ }];

/** The V8 flags for a server on a machine of `cores` cores. */
export function v8StartFlags(cores: number): readonly V8Flag[] {
  return cores <= FEW_CORES ? [...V8_MEMORY_FLAGS, ...FEW_CORES_FLAGS] : V8_MEMORY_FLAGS;
}

/**
 * glibc's malloc arenas: by default up to 8 per core, one per thread that allocates (worker
 * threads, libuv's pool), each keeping freed memory of its own. Alone, two took the local
 * transfers' and stored uploads' peak from 277–281 to 240 MiB (docs/performance.md).
 */
export const MALLOC_ARENA_MAX = '2';

/** node's inspector: the launcher has taken its port, so a relaunched server could not listen */
const INSPECTOR_FLAG = /^--inspect(-brk|-wait|-port)?(=|$)/;

export interface MemoryRelaunch {
  /** node's own options for the server's process: the settings added in front of the launcher's */
  execArgv: string[];
  /** the server's environment: the launcher's, with the settings added */
  env: NodeJS.ProcessEnv;
}

/** Whether the switch asks for the settings; throws, with the values it takes, on any other value. */
export function memorySettingsOn(value: string | undefined): boolean {
  const text = (value ?? '').trim();
  if (text === '' || text === 'on') return true;
  if (text === 'off') return false;
  throw new Error(`${MEMORY_SETTINGS_SWITCH} is '${text}'; it takes "on" (or nothing) or "off".`);
}

/**
 * How to start the server with the memory settings, or null when it should run here: the switch
 * is off, this process already has them all (set by the user, or by the launcher that started it,
 * so a relaunched server never relaunches again), or it runs under the inspector (the one a
 * developer attached to is the process they started). A setting the user gave, in node's
 * options or NODE_OPTIONS or the environment, is kept as given.
 */
export function memoryRelaunch(execArgv: readonly string[], env: NodeJS.ProcessEnv, cores = os.availableParallelism()): MemoryRelaunch | null {
  if (!memorySettingsOn(env[MEMORY_SETTINGS_SWITCH])) return null;
  const nodeOptions = (env.NODE_OPTIONS ?? '').split(/\s+/);
  if ([...execArgv, ...nodeOptions].some((option) => INSPECTOR_FLAG.test(option))) return null;
  const missing = v8StartFlags(cores).filter(({ given }) => ![...execArgv, ...nodeOptions].some((option) => given.test(option))).map(({ flag }) => flag);
  const hasArenaMax = env.MALLOC_ARENA_MAX !== undefined;
  if (missing.length === 0 && hasArenaMax) return null;
  return {
    execArgv: [...missing, ...execArgv],
    env: hasArenaMax ? { ...env } : { ...env, MALLOC_ARENA_MAX },
  };
}

/**
 * The same settings for the desktop app's Electron process, which runs the server in its main
 * process: V8's flags as Electron's `--js-flags` switch on its command line, the arena limit in
 * its environment; or null when the switch is off or both are in place. Only a command line
 * reaches the main process's V8: `app.commandLine.appendSwitch('js-flags', …)` from the app's
 * own code comes after that V8 was made, and reaches only the processes Electron starts later
 * (renderers), so `npm start` (scripts/start.mjs) passes them when it starts Electron. A user's
 * own `--js-flags` is left as given (Electron takes one).
 */
export function electronMemorySettings(args: readonly string[], env: NodeJS.ProcessEnv, cores = os.availableParallelism()): { args: string[]; env: NodeJS.ProcessEnv } | null {
  if (!memorySettingsOn(env[MEMORY_SETTINGS_SWITCH])) return null;
  const hasJsFlags = args.some((arg) => /^--js-flags(=|$)/.test(arg));
  const hasArenaMax = env.MALLOC_ARENA_MAX !== undefined;
  if (hasJsFlags && hasArenaMax) return null;
  return {
    args: hasJsFlags ? [...args] : [`--js-flags=${v8StartFlags(cores).map(({ flag }) => flag).join(' ')}`, ...args],
    env: hasArenaMax ? { ...env } : { ...env, MALLOC_ARENA_MAX },
  };
}
