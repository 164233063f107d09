// Where the WebDAV latency row's time goes (docs/performance.md, "Where the WebDAV row's time
// went"): the bench's row (1,000 small files to Apache mod_dav, 50 ms a request) behind a copy of
// test/support/latency-proxy.ts that timestamps each request (arrival, hand-over to Apache, its
// answer, the end), counts the client's connections, and reads Ferry's and Apache's CPU.
//   node --import tsx bench/probe-latency.ts
// env: ROUNDS (2), FILES (1000), HASHES=bcrypt,md5 (Apache servers, alternated by round),
// POLL=10,200 (ms between job polls, alternated by round), BUILT=1 (out/ instead of the sources),
// NODEARGS (Ferry's node flags, e.g. --cpu-prof). A debugging tool, not a bench row.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Job, ResourceSummary } from '../shared/api.js';
import { startFerryProcess } from '../test/support/ferry-process.js';
import { makeMixedFolder } from './data.js';
import { startApacheWebdav } from '../test/webdav/apache-webdav.js';
import { listenOnLoopback } from '../test/emulators/shared/http.js';

const LAT = 50;
const rounds = Number(process.env.ROUNDS ?? 2);
const files = Number(process.env.FILES ?? 1000);
const pollMs = (round: number) => (process.env.POLL ? Number(process.env.POLL.split(',')[round % process.env.POLL.split(',').length]) : 10);
import { readFileSync } from 'node:fs';
const cpu = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8'); const x = f.slice(f.lastIndexOf(')') + 2).split(' '); return (Number(x[11]) + Number(x[12])) * 10; };

type Rec = { method: string; url: string; arrive: number; forward: number; head: number; upEnd: number; end: number };
let trace: Rec[] = [];
let connections = 0;

async function main() {
  const root = await mkdtemp(path.join(os.tmpdir(), 'davlat-'));
  const hashes = (process.env.HASHES ?? 'bcrypt').split(',') as ('bcrypt' | 'md5')[];
  const setups: { hash: string; apache: Awaited<ReturnType<typeof startApacheWebdav>>; server: http.Server; davUrl: string; apachePid: number }[] = [];
  for (const hash of hashes) setups.push(await setup(hash));
  async function setup(hash: 'bcrypt' | 'md5') {
  const apache = await startApacheWebdav({ passwordHash: hash });
  const target = new URL(apache.url);
  const agent = new http.Agent({ keepAlive: true });
  let origin = '';
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const rec: Rec = { method: req.method!, url: req.url!, arrive: performance.now(), forward: 0, head: 0, upEnd: 0, end: 0 };
    trace.push(rec);
    res.once('close', () => (rec.end = performance.now()));
    setTimeout(() => {
      rec.forward = performance.now();
      const headers: http.OutgoingHttpHeaders = { ...req.headers, host: target.host };
      const destination = req.headers.destination;
      if (typeof destination === 'string') headers.destination = destination.replace(origin, target.origin);
      const forwarded = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
        rec.head = performance.now();
        answer.once('end', () => (rec.upEnd = performance.now()));
        const { connection: _c, 'keep-alive': _k, ...endToEnd } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd);
        answer.pipe(res);
      });
      forwarded.on('error', () => res.destroy());
      req.pipe(forwarded);
    }, LAT);
  });
  server.on('connection', () => connections++);
  origin = await listenOnLoopback(server);
  const davUrl = `${origin}${target.pathname}`;
  const apachePid = Number(readFileSync(path.join(path.dirname(apache.dataDir), 'httpd.pid'), 'utf8').trim()) || 0;
  return { hash, apache, server, davUrl, apachePid };
  }
  const workspace = path.join(root, 'ws');
  await mkdir(workspace, { recursive: true });
  await makeMixedFolder(path.join(workspace, 'Small'), { textFiles: files, maxTextBytes: 4 * 1024, binaries: 0, binaryBytes: 0 }, 13);
  const ferry = await startFerryProcess({ dataDir: path.join(root, 'data'), workspace, built: process.env.BUILT === '1', env: {}, nodeArgs: process.env.NODEARGS ? process.env.NODEARGS.split(' ') : [] });
  const api = async <T>(p: string, init: RequestInit = {}): Promise<T> => {
    const r = await fetch(new URL(p, ferry.url), { ...init, headers: { authorization: `Bearer ${ferry.accessKey}`, ...(init.headers as Record<string, string>) } });
    return (await r.json()) as T;
  };
  const listing = await api<ResourceSummary[]>('api_v1/targets/local/resources/?container=None', { headers: { 'service-source-token': ferry.accessKey } });
  const smallId = listing.find((r) => r.title === 'Small')!.id;
  try {
    for (let round = 0; round < rounds; round++) {
      trace = [];
      connections = 0;
      const { hash, apache, davUrl, apachePid } = setups[round % setups.length]!;
      const token = JSON.stringify({ url: davUrl, username: apache.username, password: apache.password });
      const load = os.loadavg()[0]!.toFixed(2);
      const c0 = cpu(ferry.pid);
      const a0 = apachePid ? cpu(apachePid) : 0;
      const t0 = performance.now();
      const r = await fetch(new URL('api_v1/targets/webdav/resources/', ferry.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'service-source-token': ferry.accessKey, 'service-destination-token': token, 'duplicate-file-action': 'update' },
        body: JSON.stringify({ source_target_name: 'local', source_resource_id: smallId }),
      });
      const { ticket_number: ticket } = (await r.json()) as { ticket_number: string };
      const tPosted = performance.now();
      let job: Job;
      let polls = 0;
      for (;;) {
        job = await api<Job>(`api_v1/jobs/${ticket}/`);
        polls++;
        if (job.status === 'queued' || job.status === 'running') {
          await new Promise((res) => setTimeout(res, pollMs(round)));
          continue;
        }
        break;
      }
      const t1 = performance.now();
      console.log(`${hash}: poll ${pollMs(round)} ms; ferry cpu ${cpu(ferry.pid) - c0} ms; apache cpu ${apachePid ? cpu(apachePid) - a0 : -1} ms; bench process cpu ${(process.cpuUsage().user + process.cpuUsage().system) / 1000 | 0} ms total`);
      report(round, load, t0, tPosted, t1, job, polls);
    }
  } finally {
    ferry.child.kill();
    for (const { server, apache } of setups) {
      server.closeAllConnections();
      server.close();
      await apache.stop();
    }
    await rm(root, { recursive: true, force: true });
  }
}

function mean(a: number[]) {
  return a.length ? a.reduce((s, x) => s + x, 0) / a.length : 0;
}
function pct(a: number[], p: number) {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
}

function report(round: number, load: string, t0: number, tPosted: number, t1: number, job: Job, polls: number) {
  const first = Math.min(...trace.map((r) => r.arrive));
  const last = Math.max(...trace.map((r) => r.end));
  const total = t1 - t0;
  // time-weighted mean under way between first arrival and last end
  const events: [number, number][] = [];
  for (const r of trace) events.push([r.arrive, 1], [r.end, -1]);
  events.sort((a, b) => a[0] - b[0]);
  let u = 0;
  let area = 0;
  let prev = first;
  const hist = new Map<number, number>();
  for (const [t, d] of events) {
    area += u * (t - prev);
    hist.set(u, (hist.get(u) ?? 0) + (t - prev));
    prev = t;
    u += d;
  }
  const byMethod = new Map<string, Rec[]>();
  for (const r of trace) byMethod.set(r.method, [...(byMethod.get(r.method) ?? []), r]);
  console.log(`round ${round} load ${load} status ${job.status}: total ${total.toFixed(0)} ms, post ${(tPosted - t0).toFixed(0)}, first req at +${(first - t0).toFixed(0)}, last end at +${(last - t0).toFixed(0)}, job seen done +${(t1 - last).toFixed(0)} after; polls ${polls}; client connections ${connections}`);
  console.log(`  requests ${trace.length}, ideal ${(trace.length / 8 * LAT).toFixed(0)} ms, ratio ${(total / (trace.length / 8 * LAT)).toFixed(3)}; mean under way first→last ${(area / (last - first)).toFixed(2)}`);
  console.log(`  time at k under way (ms): ${[...hist.entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}:${v.toFixed(0)}`).join(' ')}`);
  for (const [m, rs] of byMethod) {
    const apacheMs = rs.map((r) => r.upEnd - r.forward);
    const head = rs.map((r) => r.head - r.forward);
    const tot = rs.map((r) => r.end - r.arrive);
    console.log(`  ${m} ×${rs.length}: at proxy ${mean(tot).toFixed(1)} ms (p50 ${pct(tot, 0.5).toFixed(1)} p90 ${pct(tot, 0.9).toFixed(1)}); apache head ${mean(head).toFixed(2)} end ${mean(apacheMs).toFixed(2)} (p90 ${pct(apacheMs, 0.9).toFixed(1)}); timer late ${mean(rs.map((r) => r.forward - r.arrive - LAT)).toFixed(2)}; end after upstream end ${mean(rs.map((r) => r.end - r.upEnd)).toFixed(2)}`);
  }
  // PUT temp → MOVE of the same temp: gap
  const puts = new Map<string, Rec>();
  for (const r of trace) if (r.method === 'PUT') puts.set(r.url, r);
  const gapsPM: number[] = [];
  for (const r of trace) if (r.method === 'MOVE') { const p = puts.get(r.url); if (p) gapsPM.push(r.arrive - p.end); }
  console.log(`  PUT end → its MOVE arrives: mean ${mean(gapsPM).toFixed(2)} p50 ${pct(gapsPM, 0.5).toFixed(2)} p90 ${pct(gapsPM, 0.9).toFixed(2)} max ${Math.max(...gapsPM).toFixed(1)}`);
  // MOVE end → next PUT arrival (greedy: each request arrival matched with the latest unmatched end before it)
  const ends = trace.filter((r) => r.method !== 'PUT' || true).map((r) => r.end).sort((a, b) => a - b);
  const arrivals = trace.map((r) => r.arrive).sort((a, b) => a - b);
  const gaps: number[] = [];
  let j = 0;
  const pending: number[] = [];
  for (const a of arrivals) {
    while (j < ends.length && ends[j]! <= a) pending.push(ends[j++]!);
    const e = pending.shift();
    if (e !== undefined) gaps.push(a - e);
  }
  console.log(`  any end → an arrival (FIFO): mean ${mean(gaps).toFixed(2)} p50 ${pct(gaps, 0.5).toFixed(2)} p90 ${pct(gaps, 0.9).toFixed(2)} n ${gaps.length}`);
  const sorted = [...trace].sort((a, b) => a.arrive - b.arrive);
  const head = sorted.slice(0, 30).map((r) => `${r.method}@${(r.arrive - t0).toFixed(0)}-${(r.end - t0).toFixed(0)}`).join(' ');
  console.log(`  first: ${head}`);
  const tail = [...trace].sort((a, b) => a.end - b.end).slice(-30).map((r) => `${r.method}@${(r.arrive - t0).toFixed(0)}-${(r.end - t0).toFixed(0)}`).join(' ');
  console.log(`  last: ${tail}`);
}

await main();
