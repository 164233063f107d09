// When Ferry's job queue falls idle, one full garbage collection gives back the memory its jobs
// left (issue #18, docs/performance.md "Peak memory: a collection when the queue falls idle").
//
// Why: a job's per-file objects live as long as the job (its entries, their closures, the
// provenance record's list) and so are promoted to V8's old generation, where they stay after
// the job until the old generation reaches its limit, which V8 sets from the heap it found live
// at its last full collection. On a server that runs a transfer after a transfer, nothing else
// brings that collection about: the heap only grew (a trace of six transfers: 28 MB live after
// the start, 72 MB used at the end, no full collection between), and each job's peak sat on the
// garbage of the jobs before it. A collection while nothing runs costs no job any time.
//
// Switched off with the other memory settings: FERRY_MEMORY_SETTINGS=off.
import v8 from 'node:v8';
import vm from 'node:vm';
import { memorySettingsOn, MEMORY_SETTINGS_SWITCH } from '../launch/memory-settings.js';

/** What the job service tells: its last running job ended with nothing to start, or a job started. */
export interface QueueIdleListener {
  idle(): void;
  busy(): void;
}

/** Heap and external memory grown by at least this since the last collection: a job of some hundreds of files. */
export const COLLECT_AFTER_GROWTH_BYTES = 16 * 1024 * 1024;
/** The queue idle this long first, so a client that sends its jobs one after another is not collected between each two. */
export const IDLE_DELAY_MS = 100;

export interface IdleCollectionOptions {
  /** a full collection (V8's own: exposedCollector) */
  collect: () => void;
  /** the memory a collection can give back: V8's heap in use and the buffers outside it */
  usedBytes?: () => number;
  delayMs?: number;
}

/**
 * One per process: the heap is the process's, so "nothing runs" means no queue of the process
 * has a job running (tests run several cores in one process; a collection when one queue fell
 * idle would pause another's job). Each queue tells through its own listener (listenerFor).
 */
export class IdleCollection {
  private timer: NodeJS.Timeout | null = null;
  private readonly collect: () => void;
  private readonly usedBytes: () => number;
  private readonly delayMs: number;
  /** what was in use right after the last collection (or at the start) */
  private baseline: number;
  /** the queues with a job running */
  private readonly busyQueues = new Set<QueueIdleListener>();

  constructor(options: IdleCollectionOptions) {
    this.collect = options.collect;
    this.usedBytes = options.usedBytes ?? usedHeapAndExternalBytes;
    this.delayMs = options.delayMs ?? IDLE_DELAY_MS;
    this.baseline = this.usedBytes();
  }

  /** The listener for one job queue; the collection waits until every queue's last job has ended. */
  listenerFor(): QueueIdleListener {
    const queue: QueueIdleListener = {
      busy: () => {
        this.busyQueues.add(queue);
        this.cancel();
      },
      idle: () => {
        this.busyQueues.delete(queue);
        if (this.busyQueues.size === 0) this.arm();
      },
    };
    return queue;
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.usedBytes() - this.baseline < COLLECT_AFTER_GROWTH_BYTES) return;
      this.collect();
      this.baseline = this.usedBytes();
    }, this.delayMs);
    // a collection waiting never keeps a finished process alive
    this.timer.unref();
  }

  private cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

function usedHeapAndExternalBytes(): number {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/** V8's collection: a full one unless `{ type: 'minor' }` asks for the young generation only. */
export type Collector = (options?: { type?: 'minor' | 'major' }) => void;

let processCollector: Collector | null | undefined;

/**
 * V8's collector for this process: the one `node --expose-gc` gives, if Ferry was started so;
 * else taken from a context made with that flag set for that moment only (the flag decides what
 * a new context's global holds, so no other context gets `gc`). Null where V8 refuses (a runtime
 * whose V8 takes no flags once started): then nothing is collected, as before. Taken once.
 */
export function exposedCollector(): Collector | null {
  if (processCollector === undefined) processCollector = takeCollector();
  return processCollector;
}

function takeCollector(): Collector | null {
  const given = (globalThis as { gc?: unknown }).gc;
  if (typeof given === 'function') return given as Collector;
  try {
    v8.setFlagsFromString('--expose-gc');
  } catch {
    return null;
  }
  try {
    const collect = vm.runInNewContext('gc') as unknown;
    return typeof collect === 'function' ? (collect as Collector) : null;
  } catch {
    return null;
  } finally {
    // V8 took the flag a moment ago, so it takes this one
    v8.setFlagsFromString('--no-expose-gc');
  }
}

/**
 * The collector for the memory settings' collections (this one, young-collection.ts): V8's, or
 * null when the settings are off (FERRY_MEMORY_SETTINGS=off) or V8 gives none. Throws, with the
 * values it takes, on any other value of the switch.
 */
export function settingsCollector(env: NodeJS.ProcessEnv): Collector | null {
  return memorySettingsOn(env[MEMORY_SETTINGS_SWITCH]) ? exposedCollector() : null;
}

let processCollection: IdleCollection | undefined;

/**
 * A job queue's listener on the process's one idle collection, or null when the memory
 * settings are off or V8 gives no collector.
 */
export function idleCollectionFor(env: NodeJS.ProcessEnv): QueueIdleListener | null {
  const collect = settingsCollector(env);
  if (!collect) return null;
  processCollection ??= new IdleCollection({ collect });
  return processCollection?.listenerFor() ?? null;
}
