import { existsSync, readFileSync } from 'node:fs';

/**
 * Whether the process `pid` still runs, for the sweeps that remove what a killed Ferry was
 * writing (a file named with its writer's pid). A zombie (ended, not yet reaped: its parent,
 * Ferry's launcher, was killed too, and the reaper takes its time) writes nothing any more, so
 * it counts as gone, though `kill(pid, 0)` still finds it. Linux says so in /proc; where there
 * is no /proc, `kill(pid, 0)` alone decides.
 */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // gone since, or no /proc on this system
    return !existsSync('/proc/self/status');
  }
  const state = /^State:\s+(\S)/m.exec(status)?.[1];
  return state !== 'Z' && state !== 'X';
}
