import { spawn, spawnSync } from 'node:child_process';
import { openAsBlob } from 'node:fs';
import path from 'node:path';

/** curl is on this machine (the bench's clients use it where it is: as a person would, and in a process of its own). */
export const curlAvailable = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;

/**
 * POSTs a ZIP as multipart to the upload route `url` and returns the job's ticket: with curl
 * when `curl` and installed, else with fetch in this process. Node's fetch of a FormData from
 * openAsBlob took ~1 s to send 89 MiB over loopback where curl took 0.2–0.3 s, on the cores the
 * server needs, so a row timed through fetch times its client too.
 */
export async function postZip(url: string, zip: string, accessKey: string, curl: boolean): Promise<string> {
  if (curl && curlAvailable) {
    const answer = await new Promise<string>((resolve, reject) => {
      const child = spawn('curl', ['-sS', '-K', '-', '-F', `service-file=@${zip};type=application/zip`, '-H', 'duplicate-file-action: update', '-w', '\n%{http_code}', url], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      // the key goes on curl's stdin, never its command line
      child.stdin!.end(`header = "service-destination-token: ${accessKey}"\n`);
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`upload: curl exited with ${code}`))));
    });
    const status = answer.slice(answer.lastIndexOf('\n') + 1);
    if (status !== '202') throw new Error(`upload: HTTP ${status} ${answer}`);
    return (JSON.parse(answer.slice(0, answer.lastIndexOf('\n'))) as { ticket_number: string }).ticket_number;
  }
  const form = new FormData();
  form.set('service-file', await openAsBlob(zip), path.basename(zip));
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'service-destination-token': accessKey, 'duplicate-file-action': 'update' },
    body: form,
  });
  if (response.status !== 202) throw new Error(`upload: HTTP ${response.status} ${await response.text()}`);
  return ((await response.json()) as { ticket_number: string }).ticket_number;
}
