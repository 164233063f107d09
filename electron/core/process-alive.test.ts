import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processIsAlive } from './process-alive.js';

const linux = existsSync('/proc/self/status');
if (!linux) console.log('[process-alive] the zombie case not run: no /proc here');

describe('processIsAlive', () => {
  it('is true of a running process and false of one that has exited', async () => {
    expect(processIsAlive(process.pid)).toBe(true);
    const child = spawn('true');
    const pid = child.pid!;
    await new Promise((resolve) => child.on('exit', resolve));
    // Node has reaped it: the pid names nothing (or, rarely, something new)
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(processIsAlive(pid)).toBe(existsSync(`/proc/${pid}`));
  });

  it.skipIf(!linux)('is false of a zombie, which kill(pid, 0) still finds', async () => {
    // The child exits at once; its parent never waits for it: a zombie for 5 s. Perl (perl-base,
    // essential in Debian) rather than sh, which reaps a finished background job on its own.
    const parent = spawn('perl', ['-e', '$SIG{CHLD} = "DEFAULT"; $| = 1; my $pid = fork // die; exit 0 unless $pid; print "$pid\\n"; sleep 5'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const pid = Number((await new Promise<Buffer>((resolve) => parent.stdout.once('data', resolve))).toString().trim());
      for (let i = 0; i < 100 && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(/^State:\s+Z/m);
      expect(() => process.kill(pid, 0)).not.toThrow();
      expect(processIsAlive(pid)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
