// What making a file costs where a row makes its files, measured in the same run. On this
// development machine's ext4 a new file costs ~25 µs of kernel time in a quiet part of the
// disk and 0.3–0.9 ms where many files were freed in the last minute or so (set-aside.ts), or
// as a folder's block group fills; that is paid by Ferry, the reference tool and Apache alike,
// and moves the local and latency rows more than most changes to Ferry do. A row's note says
// what it was (docs/performance.md, "What making a file costs here").
import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';

/** Files made per measurement: enough to pass a block group's cached inodes, cheap at any cost (< 0.3 s). */
const PROBE_FILES = 300;
/** Above this the note warns: a quiet disk is some 25–60 µs. */
const SLOW_CREATION_MICROS = 100;

let probes = 0;

/**
 * Makes PROBE_FILES empty files in a new folder inside `parent` and says, for a row's note, the
 * kernel time a file took, with a warning when it is slow. The files stay (removing them would
 * make the next files dearer); they go with `parent`'s own removal. Synchronous calls in this
 * process, which does nothing else meanwhile (every server is a process of its own), so its
 * system time is theirs.
 */
export function fileCreationNote(parent: string): string {
  const folder = path.join(parent, `.file-creation-${probes++}`);
  mkdirSync(folder, { recursive: true });
  const before = process.cpuUsage();
  for (let i = 0; i < PROBE_FILES; i++) closeSync(openSync(path.join(folder, String(i)), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644));
  const micros = process.cpuUsage(before).system / PROBE_FILES;
  const slow = micros > SLOW_CREATION_MICROS ? ' (slow, as after many files were removed nearby; a quiet disk takes 25–60 µs)' : '';
  return `making a file here took ${micros.toFixed(0)} µs of kernel time${slow}`;
}
