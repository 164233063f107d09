import { knownFinding } from '../known-findings.js';
import { Finding, describe } from './verdict.js';

// Runs one input through a target so that an exception thrown where no caller can catch it
// (an fs callback deep in yauzl) — which would end the Ferry process — is a finding of this
// input, and a finding already reported (known-findings.ts) is logged, not raised.

let current: ((error: unknown) => void) | null = null;
let installed = false;
const metKnown = new Set<string>();

function install(): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', (error) => {
    if (current) current(error);
    else throw error;
  });
}

export async function runGuarded(check: (bytes: Uint8Array, scratch: string) => Promise<string>, bytes: Uint8Array, scratch: string): Promise<string> {
  install();
  const crashed = new Promise<never>((_, reject) => {
    current = (error) => reject(new Finding(`uncaught exception (would end the Ferry process): ${describe(error)}`, { cause: error }));
  });
  try {
    return await Promise.race([check(bytes, scratch), crashed]);
  } catch (error) {
    const known = knownFinding(error);
    if (!known) throw error;
    if (!metKnown.has(known.id)) {
      metKnown.add(known.id);
      console.error(`fuzz: known finding ${known.id} met again (reported, awaiting a fix; not counted)`);
    }
    return `known:${known.id}`;
  } finally {
    current = null;
  }
}
