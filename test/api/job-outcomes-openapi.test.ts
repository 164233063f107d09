// The job outcomes and the retry route are part of the described contract (openapi.json).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FINISHED_JOB_STATUSES } from '../../shared/api.js';
import { startFerry, type Ferry } from './harness.js';

let ferry: Ferry;
beforeAll(async () => {
  ferry = await startFerry();
});
afterAll(async () => ferry?.close());

it('describes every job status, failed_files and POST /api_v1/jobs/{ticket}/retry/', async () => {
  const spec = (await (await ferry.fetch('/api_v1/openapi.json')).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    components: { schemas: Record<string, { properties: Record<string, { enum?: string[]; properties?: Record<string, unknown> }> }> };
  };
  const job = spec.components.schemas.Job!;
  expect(job.properties.status!.enum).toEqual(['queued', 'running', 'paused', ...FINISHED_JOB_STATUSES]);
  expect(Object.keys(job.properties.report!.properties!)).toEqual(expect.arrayContaining(['failed_files', 'unconfirmed']));
  expect(Object.keys(job.properties)).toContain('retry_of');
  const retry = spec.paths['/api_v1/jobs/{ticket}/retry/']!.post!;
  expect(Object.keys(retry.responses).sort()).toEqual(['202', '401', '403', '404', '405', '409']);
});
