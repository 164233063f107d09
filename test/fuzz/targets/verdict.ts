import { FerryError } from '../../../electron/core/errors.js';

// What counts as a finding. The readers refuse hostile or broken archives on purpose, and
// that is not a finding: the upload reader with a FerryError (its contract), the offline
// library with a `damage` sentence or, when an entry's bytes are read, the Error yauzl or
// zlib raise for bad data. A finding is anything else: an engine error (TypeError,
// RangeError, ...), such an error's message wrapped into a refusal sentence, a hostile
// path let through, bytes that disagree with what the reader promised, or (caught by the
// fuzzer, not here) a hang, a crash of the process or runaway memory.

/** Unexpected behaviour of a reader: the fuzzer records the input as a reproducer. */
export class Finding extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'Finding';
  }
}

/**
 * Messages of JavaScript engine and Node internals: a bug in the reader, not a verdict on
 * the archive, even when a reader wraps them into its own sentence ("not a readable ZIP
 * (Cannot read properties of undefined ...)"). Bad file descriptors or too many open files
 * mean handles are closed twice or leak.
 */
const INTERNAL_MESSAGE =
  /Cannot (read|set) properties of|is not a function|is not iterable|is not a constructor|Invalid array length|Invalid typed array length|Maximum call stack size|The value of "[^"]+" is out of range|outside buffer bounds|ERR_OUT_OF_RANGE|ERR_BUFFER_OUT_OF_BOUNDS|ERR_INVALID_ARG|read error (EBADF|EMFILE|ENFILE)|\bEBADF\b|\bEMFILE\b/;

export function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** A refusal sentence (FerryError message or offline `damage`) that is really a wrapped bug. */
export function checkSentence(sentence: string, where: string): void {
  if (INTERNAL_MESSAGE.test(sentence)) throw new Finding(`${where}: an internal error surfaced as a refusal: ${sentence}`);
}

/** The upload reader documents FerryError as its only way to refuse. */
export function expectFerryError(error: unknown, where: string): FerryError {
  if (error instanceof Finding) throw error;
  if (!(error instanceof FerryError)) throw new Finding(`${where} threw ${describe(error)} instead of a FerryError`, { cause: error });
  checkSentence(error.message, where);
  return error;
}

/**
 * The offline library reads entry bytes straight from yauzl: a plain Error from yauzl, or a
 * zlib error (code Z_*) for broken deflate data, is its refusal (the caller records a
 * per-file failure). Engine errors are not.
 */
export function expectReadRefusal(error: unknown, where: string): void {
  if (error instanceof Finding) throw error;
  if (error instanceof FerryError) return checkSentence(error.message, where);
  const code = (error as { code?: unknown } | null)?.code;
  const zlib = typeof code === 'string' && code.startsWith('Z_');
  if (!(error instanceof Error) || (error.constructor !== Error && !zlib)) {
    throw new Finding(`${where} failed with ${describe(error)}, not a read error of the archive`, { cause: error });
  }
  checkSentence(error.message, where);
}

/**
 * A path a reader hands out must stay inside its folder wherever it is written: relative,
 * '/'-separated, no empty, '.' or '..' segment, no NUL or backslash, no drive letter, and no
 * segment that a file system may read as '..' (dots and spaces only, after NFKC).
 */
export function assertSafePath(path: string, where: string): void {
  const bad = (why: string) => new Finding(`${where} handed out the path ${JSON.stringify(path)}, which ${why}`);
  if (path.includes('\0')) throw bad('holds a NUL character');
  if (path.includes('\\')) throw bad('holds a backslash');
  if (path.startsWith('/')) throw bad('is absolute');
  if (/^[A-Za-z]:/.test(path)) throw bad('starts with a drive letter');
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') throw bad(`has the segment ${JSON.stringify(segment)}`);
  }
  for (const segment of path.normalize('NFKC').split('/')) {
    if (/^[. ]+$/.test(segment)) throw bad('has a segment of only dots and spaces (read as ".." on some systems)');
  }
}
