import type { CheckDifference, CheckReport, CheckSide, JobReport } from '../../../shared/api.js';
import { FerryError, notSupported, throwIfAborted } from '../errors.js';
import { hashStream, type HashAlgorithm } from '../hashing.js';
import type { SecretStore } from '../keychain/port.js';
import type { TargetRegistry } from '../registry.js';
import type { Entry, Target, TargetContext } from '../target.js';
import { judge, readPlan, sameDigest, sharedAlgorithms, type PathFacts } from './check-compare.js';
import { tokenFor } from './executors.js';
import { emptyReport, type JobExecutionContext, type JobService } from './types.js';
import { PROVENANCE_FILE } from '../provenance/format.js';

/** What a `check` job is submitted with (persisted; no token). The job's target and resource_id are the destination. */
export interface CheckParams {
  source: { target: string; resourceId: string };
  destinationId: string;
  /** compute digests from the bytes of files the two sides give no common hash for */
  readBytes: boolean;
}

export interface CheckExecutorDeps {
  targets: TargetRegistry;
  secrets: SecretStore;
  accessKey: string;
}

/**
 * `check` jobs: compare a source resource with a destination resource of the same shape (a
 * folder with the folder a transfer made of it, a file with a file), like `rclone check`, and
 * report what is missing, extra and different. Nothing is written anywhere. Bytes are read
 * only with readBytes, and only for files the two targets give no common hash for. outcome.ts
 * decides the status from the report's `check`.
 */
export function registerCheckExecutor(jobs: JobService, deps: CheckExecutorDeps): void {
  jobs.register('check', (ctx) => runCheck(ctx, deps));
}

async function runCheck(ctx: JobExecutionContext, deps: CheckExecutorDeps): Promise<JobReport> {
  const params = checkParams(ctx.params);
  const source = readable(deps.targets.get(params.source.target));
  const destination = readable(deps.targets.get(ctx.job.target));
  const sourceCtx: TargetContext = { token: await tokenFor(ctx, deps, 'source', source), signal: ctx.signal };
  const destinationCtx: TargetContext = { token: await tokenFor(ctx, deps, 'destination', destination), signal: ctx.signal };
  const findings = new Findings(params.readBytes, ctx);
  const algorithms = sharedAlgorithms(source.info.supported_hash_algorithms, destination.info.supported_hash_algorithms);
  ctx.progress({ files_done: 0, files_total: null, bytes_done: 0, bytes_total: null });

  // 1. What the destination says of each path, named as the source names it (no bytes). The
  // source is looked up first, so a source gone since the 202 fails the job before the walk.
  const sourceRead = await source.read(sourceCtx, params.source.resourceId);
  const top = sourceRead.title;
  const theirs = new Map<string, PathFacts>();
  const destinationRead = await destination.read(destinationCtx, params.destinationId);
  // Ferry's provenance record at the top describes the transfer itself and differs by design
  // (a destination's is extended with each hop): neither side's is compared
  const record = `${top}/${PROVENANCE_FILE}`;
  for await (const entry of destinationRead.entries) {
    throwIfAborted(ctx.signal);
    const named = underTitle(entry.path, destinationRead.title, top);
    if (named !== record) theirs.set(named, factsOf(entry));
  }
  const theirFolders = foldersAbove(theirs.keys());

  // 2. The source, judged path by path as it streams. Files whose destination digest must be
  // read wait for step 3 with the source's digest (or none, when it needs no reading).
  const ours = new Set<string>();
  const waiting = new Map<string, { algorithm: HashAlgorithm; source: string; read: CheckSide[] }>();
  for await (const entry of sourceRead.entries) {
    throwIfAborted(ctx.signal);
    if (entry.path === record) continue;
    ours.add(entry.path);
    if (entry.kind === 'file') findings.fileSeen();
    const mine = factsOf(entry);
    const other = theirs.get(entry.path);
    if (!other) {
      // a folder is there when the destination lists it or anything in it (object stores list no folders)
      if (mine.kind === 'file' || !theirFolders.has(entry.path)) findings.missingPath(entry.path);
      continue;
    }
    const judgement = judge(entry.path, mine, other, algorithms);
    if (judgement.verdict === 'folders') continue;
    if (judgement.verdict === 'matched') findings.matchedByHash(judgement.algorithm);
    else if (judgement.verdict === 'different') findings.differs(judgement.difference);
    else if (!params.readBytes) {
      if (judgement.sizes === 'equal') findings.matchedBySize();
      else findings.cannotCompare(entry.path, NO_SIZE_NOR_HASH);
    } else {
      const plan = readPlan(mine, other);
      const digest = plan.read.includes('source') ? await findings.digestOf(entry, plan.algorithm, 'source') : mine.hashes[plan.algorithm]!;
      if (digest === null) continue;
      if (plan.read.includes('destination')) waiting.set(entry.path, { algorithm: plan.algorithm, source: digest, read: plan.read });
      else findings.compareDigests(entry.path, plan.algorithm, digest, other.hashes[plan.algorithm]!, plan.read);
    }
  }
  const ourFolders = foldersAbove(ours);
  for (const [path, facts] of theirs) {
    if (!ours.has(path) && (facts.kind === 'file' || !ourFolders.has(path))) findings.extraPath(path);
  }

  // 3. The destination's bytes, for the files that need them: its listing once more.
  if (waiting.size > 0) {
    const again = await destination.read(destinationCtx, params.destinationId);
    for await (const entry of again.entries) {
      throwIfAborted(ctx.signal);
      const path = underTitle(entry.path, again.title, top);
      const wanted = waiting.get(path);
      if (!wanted || entry.kind !== 'file') continue;
      waiting.delete(path);
      const digest = await findings.digestOf(entry, wanted.algorithm, 'destination', path);
      if (digest !== null) findings.compareDigests(path, wanted.algorithm, wanted.source, digest, wanted.read);
    }
    for (const path of waiting.keys()) findings.cannotCompare(path, 'The destination no longer lists this file, so its bytes could not be read.');
  }
  findings.finish();
  return { ...emptyReport(), check: findings.report() };
}

const NO_SIZE_NOR_HASH =
  'The two sides give no hash in common and one does not give a size; check again with read_bytes to compare the bytes.';

/** What a check collects, and the one place that counts it. */
class Findings {
  private readonly missing: string[] = [];
  private readonly extra: string[] = [];
  private readonly different: CheckDifference[] = [];
  private readonly notComparable: { path: string; reason: string }[] = [];
  private matched = 0;
  private byHash = 0;
  private bySize = 0;
  private readonly algorithms: Record<string, number> = {};
  private readonly bytesRead = { files: 0, bytes: 0 };
  private filesDone = 0;

  constructor(
    private readonly readBytes: boolean,
    private readonly ctx: JobExecutionContext,
  ) {}

  missingPath(path: string): void {
    this.missing.push(path);
  }

  extraPath(path: string): void {
    this.extra.push(path);
  }

  matchedByHash(algorithm: string): void {
    this.matched += 1;
    this.countHash(algorithm);
  }

  matchedBySize(): void {
    this.matched += 1;
    this.bySize += 1;
  }

  differs(difference: CheckDifference): void {
    this.different.push(difference);
    if (difference.by === 'hash') this.countHash(difference.algorithm);
    if (difference.by === 'size') this.bySize += 1;
  }

  cannotCompare(path: string, reason: string): void {
    this.notComparable.push({ path, reason });
  }

  compareDigests(path: string, algorithm: string, source: string, destination: string, read: CheckSide[]): void {
    if (sameDigest(source, destination)) this.matchedByHash(algorithm);
    else this.differs({ path, by: 'hash', algorithm, source: source.toLowerCase(), destination: destination.toLowerCase(), read });
  }

  /** The digest of the entry's bytes, read now; null (and the file not comparable) when they cannot be read. */
  async digestOf(entry: Entry, algorithm: HashAlgorithm, side: CheckSide, path = entry.path): Promise<string | null> {
    try {
      const { hashes, bytes } = await hashStream(await entry.open(), [algorithm]);
      this.bytesRead.files += 1;
      this.bytesRead.bytes += bytes;
      this.ctx.progress({ bytes_done: this.bytesRead.bytes });
      return hashes[algorithm]!;
    } catch (error) {
      throwIfAborted(this.ctx.signal);
      this.cannotCompare(path, `Ferry could not read the ${side}'s bytes: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }

  fileSeen(): void {
    this.filesDone += 1;
    this.ctx.progress({ files_done: this.filesDone });
  }

  /** The totals, known once the walk is over: the source's files, and the bytes read. */
  finish(): void {
    this.ctx.progress({ files_total: this.filesDone, bytes_total: this.bytesRead.bytes });
  }

  report(): CheckReport {
    const byPath = <T extends { path: string }>(a: T, b: T) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
    return {
      matched: this.matched,
      missing: [...this.missing].sort(),
      extra: [...this.extra].sort(),
      different: [...this.different].sort(byPath),
      not_comparable: [...this.notComparable].sort(byPath),
      compared_by: { hash: this.byHash, size: this.bySize },
      algorithms: { ...this.algorithms },
      read_bytes: this.readBytes,
      read: { ...this.bytesRead },
    };
  }

  private countHash(algorithm: string): void {
    this.byHash += 1;
    this.algorithms[algorithm] = (this.algorithms[algorithm] ?? 0) + 1;
  }
}

function readable(target: Target): Target {
  if (!target.info.supported_actions.resource_download) {
    throw notSupported(`${target.info.readable_name} does not let Ferry read resources, so nothing there can be checked.`);
  }
  return target;
}

function factsOf(entry: Entry): PathFacts {
  return entry.kind === 'folder' ? { kind: 'folder', size: null, hashes: {} } : { kind: 'file', size: entry.size, hashes: entry.hashes };
}

/** `Data (2)/a.txt` read from a resource titled `Data (2)`, named under `Data`: `Data/a.txt`. */
function underTitle(path: string, title: string, top: string): string {
  if (title === top) return path;
  if (path === title) return top;
  return path.startsWith(`${title}/`) ? top + path.slice(title.length) : path;
}

/** Every folder some path sits in (`a/b/c.txt` → `a`, `a/b`). */
function foldersAbove(paths: Iterable<string>): Set<string> {
  const folders = new Set<string>();
  for (const path of paths) {
    for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) folders.add(path.slice(0, at));
  }
  return folders;
}

// Params come back from a JSON file on resume: check their shape rather than trust it.
function checkParams(raw: Record<string, unknown>): CheckParams {
  const source = raw.source as { target?: unknown; resourceId?: unknown } | undefined;
  if (!source || typeof source.target !== 'string' || typeof source.resourceId !== 'string' || typeof raw.destinationId !== 'string') {
    throw new FerryError(500, 'internal_error', "This check job's saved parameters are incomplete; start the check again.");
  }
  return { source: { target: source.target, resourceId: source.resourceId }, destinationId: raw.destinationId, readBytes: raw.readBytes === true };
}
