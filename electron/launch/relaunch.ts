// The launcher of `ferry serve`: starts the server in a child node process with the memory
// settings (`memory-settings.ts`), because those are read only when a process starts and Node 20
// cannot replace its own process image (no execve). The launcher stays as the server's stand-in
// for whoever started it: signals sent to it reach the server, and it ends with the server's exit
// code (or the same signal). Invariant: the server never outlives its launcher, so a kill of the
// launcher (the pid a user, a script or a test knows) is a kill of the server.
import { spawn } from 'node:child_process';
import os from 'node:os';
import { memoryRelaunch } from './memory-settings.js';

// for scripts/start.mjs, which starts Electron with the same settings (this is the one built entry it can load)
export { electronMemorySettings } from './memory-settings.js';

/** Set in the server's environment by its launcher (the launcher's pid); taken out again there. */
const LAUNCHED_BY = 'FERRY_LAUNCHED_BY';
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs `node <settings> <execArgv> script args` as the server and resolves with the code this
 * process should exit with; or resolves null when the server should run in this process (the
 * switch is off, the settings are in place, or this process is the relaunched server).
 */
export async function relaunchWithMemorySettings(script: string, args: readonly string[]): Promise<number | null> {
  if (process.env[LAUNCHED_BY] !== undefined) {
    delete process.env[LAUNCHED_BY]; // not passed on to what the server starts (rclone, workers)
    dieWithLauncher();
    return null;
  }
  // Windows has no signals to pass on (a child's kill() there is TerminateProcess, so a Ctrl-C
  // passed on would end the server uncleanly) and no glibc: the server runs in place there.
  if (process.platform === 'win32') return null;
  const plan = memoryRelaunch(process.execArgv, process.env);
  if (!plan) return null;
  const child = spawn(process.execPath, [...plan.execArgv, script, ...args], {
    env: { ...plan.env, [LAUNCHED_BY]: String(process.pid) },
    // the IPC channel is the server's lifeline to the launcher (dieWithLauncher)
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    // its own process group, so a terminal's Ctrl-C reaches the server once, through the launcher
    detached: true,
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, forward);
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | Error>((resolve) => {
    child.once('error', resolve);
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  for (const signal of FORWARDED) process.off(signal, forward);
  if (ended instanceof Error) {
    console.error(`Ferry could not start its server process: ${ended.message}`);
    return 1;
  }
  if (ended.signal) {
    // end as the server did, so whoever waits on the launcher sees the same signal
    process.kill(process.pid, ended.signal);
    return 128 + (os.constants.signals[ended.signal] ?? 0);
  }
  return ended.code ?? 1;
}

/**
 * In the relaunched server: when the launcher is gone without waiting for it (it was killed, even
 * by SIGKILL, which it cannot pass on), the IPC channel closes and the server ends at once, as a
 * killed process would. The channel never keeps the server running by itself.
 */
function dieWithLauncher(): void {
  if (!process.channel) return;
  process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
  process.channel.unref();
}
