import { describe, expect, it, vi } from 'vitest';
import type { DescriptiveMetadata, ResourceSummary, TargetDescription } from '../../shared/api.js';
import { ApiRequestError, type ApiClient } from './api/client.js';
import { requestSizedGroups } from './actions.js';
import { createServices } from './services.js';
import { job, MemoryStorage, summary } from './test-support.js';

/** A target description: its names and whether it keeps descriptive metadata matter here. */
function target(name: string, readable: string, keepsMetadata: boolean): TargetDescription {
  return {
    name,
    readable_name: readable,
    supported_actions: { resource_collection: true, resource_detail: true, resource_download: true, resource_upload: true },
    supported_hash_algorithms: [],
    detail: '',
    capabilities: { search: false, folder_modes: [] },
    keeps_metadata: keepsMetadata,
  };
}

function setup(listing: () => ResourceSummary[]) {
  const verify = vi.fn(async () => ({ ticket_number: 'v1', message: 'The server is processing the request.' }));
  const children = vi.fn(async () => listing());
  const api = {
    baseUrl: 'http://127.0.0.1:1',
    authHeaders: {},
    session: async () => ({
      version: '0',
      keychain: { persistent: false, description: '' },
      targets: [
        { name: 'local', readable_name: 'Local folders', credential: 'access-key', has_stored_token: false, can_verify: false },
        { name: 'offline', readable_name: 'Downloaded ZIPs', credential: 'access-key', has_stored_token: false, can_verify: true },
      ],
    }),
    targets: async () => [target('local', 'Local folders', false), target('zenodo', 'Zenodo', true), target('figshare', 'figshare', true)],
    children,
    verify,
    job: async () => ({ ...job('v1', 'running'), kind: 'verify' as const, target: 'offline', resource_id: 'arc1' }),
    detail: vi.fn(),
  } as unknown as ApiClient;
  const services = createServices({ api, storage: new MemoryStorage() });
  return { services, verify, children };
}

describe('verify action', () => {
  it('starts a verify job for the selected top-level archive, labelled after it', async () => {
    const { services, verify } = setup(() => [summary('arc1', 'project', 'container')]);
    await services.session.load();
    await services.panes.right.getState().setTarget('offline');
    services.panes.right.getState().select('arc1', 'replace', ['arc1']);
    expect(services.actions.verifiableItems('right').map((i) => i.title)).toEqual(['project']);
    await services.actions.verify('right');
    expect(verify).toHaveBeenCalledWith('offline', 'arc1');
    const state = services.jobs.store.getState();
    expect(state.submissions.v1).toMatchObject({ kind: 'verify', label: 'Verify project', source: { id: 'arc1' } });
    expect(state.jobs.v1?.job.kind).toBe('verify');
    // retry resubmits the same verification
    expect(await services.actions.retryJob('v1')).toBeNull();
    expect(verify).toHaveBeenCalledTimes(2);
  });

  it('refuses, with a sentence, inside an archive or on a target that cannot verify', async () => {
    const { services, verify } = setup(() => [summary('arc1', 'project', 'container')]);
    await services.session.load();
    await services.panes.left.getState().setTarget('local');
    expect(services.actions.canVerify('local')).toBe(false);
    await services.actions.verify('left');
    expect(services.ui.getState().notices.left?.text).toBe('Only archives in Downloaded ZIPs can be verified.');
    await services.panes.right.getState().setTarget('offline', [{ id: 'arc1', title: 'project' }]);
    expect(services.actions.verifiableItems('right')).toEqual([]);
    await services.actions.verify('right');
    expect(services.ui.getState().notices.right?.text).toContain('Select an archive at the top of Downloaded ZIPs');
    expect(verify).not.toHaveBeenCalled();
  });
});

describe('keep offline', () => {
  it('a pane on the library lists again until the kept archive is there', async () => {
    let round = 0;
    const { services, children } = setup(() => (round++ < 2 ? [] : [summary('arc9', 'project', 'container')]));
    await services.session.load();
    await services.panes.right.getState().setTarget('offline'); // round 0: empty
    await services.actions.showKeptCopies([0, 1, 1, 1, 1]);
    expect(services.panes.right.getState().items.map((i) => i.title)).toEqual(['project']);
    expect(children).toHaveBeenCalledTimes(3); // stopped as soon as it appeared
  });
});

describe('transfer of a selection', () => {
  it('sends a whole selection into a folder as one request, and a retry resends all of it', async () => {
    const files = Array.from({ length: 300 }, (_, i) => summary(`f${i}`, `part_${i}.csv`, 'item', 'src'));
    const { services } = setup(() => files);
    const transfer = vi.fn(async () => ({ ticket_number: 't1', message: 'The server is processing the request.' }));
    Object.assign(services.api, { transfer, job: async () => ({ ...job('t1', 'running'), kind: 'transfer' as const }) });
    await services.session.load();
    await services.panes.left.getState().setTarget('local', [{ id: 'src', title: 'src' }]);
    await services.panes.right.getState().setTarget('local', [{ id: 'dest', title: 'dest' }]);
    services.panes.left.getState().selectAll(files.map((f) => f.id));
    services.duplicates.ask = async () => ({ action: 'ignore' });
    await services.actions.transferSelection('left', 'right');
    expect(transfer).toHaveBeenCalledTimes(1);
    expect(transfer).toHaveBeenCalledWith('local', 'dest', { target: 'local', id: 'f0', ids: files.map((f) => f.id) }, 'ignore', { provenance: true });
    expect(services.jobs.store.getState().submissions.t1?.label).toBe('300 items from Local folders › src → Local folders › dest');
    expect(await services.actions.retryJob('t1')).toBeNull();
    expect(transfer).toHaveBeenLastCalledWith('local', 'dest', expect.objectContaining({ ids: files.map((f) => f.id) }), 'ignore', { provenance: true });
  });

  it('offers the per-file list of what is already there, and sends the choices (a retry too)', async () => {
    const files = [summary('f1', 'a.csv', 'item', 'src')];
    const { services } = setup(() => files);
    const transfer = vi.fn(async () => ({ ticket_number: 't1', message: 'The server is processing the request.' }));
    const conflict = { path: 'a.csv', destination_path: 'a.csv', source: { size: 1, date_modified: null, hashes: {} }, destination: { id: 'x', size: 2, date_modified: null, hashes: {} } };
    const conflicts = vi.fn(async () => ({ planned_files: 1, conflicts: [conflict] }));
    Object.assign(services.api, { transfer, conflicts, job: async () => ({ ...job('t1', 'running'), kind: 'transfer' as const }) });
    await services.session.load();
    await services.panes.left.getState().setTarget('local', [{ id: 'src', title: 'src' }]);
    await services.panes.right.getState().setTarget('local', [{ id: 'dest', title: 'dest' }]);
    services.panes.left.getState().select('f1', 'replace', ['f1']);
    services.duplicates.ask = async (_description, options) => {
      expect(await options?.loadConflicts?.()).toEqual([conflict]);
      return { action: 'ignore', choices: { 'a.csv': 'rename' } };
    };
    await services.actions.transferSelection('left', 'right');
    expect(conflicts).toHaveBeenCalledWith('local', 'dest', { target: 'local', id: 'f1', ids: undefined });
    expect(transfer).toHaveBeenCalledWith('local', 'dest', { target: 'local', id: 'f1', ids: undefined }, 'ignore', { provenance: true, duplicateChoices: { 'a.csv': 'rename' } });
    expect(await services.actions.retryJob('t1')).toBeNull();
    expect(transfer).toHaveBeenLastCalledWith('local', 'dest', expect.objectContaining({ id: 'f1' }), 'ignore', { provenance: true, duplicateChoices: { 'a.csv': 'rename' } });
  });

  it('cuts a selection into as few groups as fit a request body', () => {
    const ids = Array.from({ length: 30_000 }, (_, i) => ({ id: `loc_${'x'.repeat(40)}${i}` }));
    const groups = requestSizedGroups(ids);
    expect(groups.flat()).toEqual(ids);
    expect(groups.length).toBe(2);
    for (const group of groups) expect(JSON.stringify(group.map((g) => g.id)).length).toBeLessThan(1024 * 1024);
    expect(requestSizedGroups([{ id: 'a' }])).toEqual([[{ id: 'a' }]]);
  });
});

describe('metadata review before a new record', () => {
  const SOURCE: DescriptiveMetadata = {
    title: 'Coastal Survey',
    description: 'CTD casts',
    creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097' }, { name: 'Charles Babbage' }],
    keywords: ['ocean'],
    related_identifiers: [{ identifier: '10.1234/x', relation: 'isSupplementTo' }],
  };

  async function setupReview(metadata: () => Promise<DescriptiveMetadata>, destination = 'zenodo') {
    const { services } = setup(() => [summary('d1', 'survey', 'container', 'src')]);
    const transfer = vi.fn(async () => ({ ticket_number: 't1', message: 'The server is processing the request.' }));
    Object.assign(services.api, { transfer, metadata: vi.fn(metadata), job: async () => ({ ...job('t1', 'running'), kind: 'transfer' as const }) });
    await services.session.load();
    await services.panes.left.getState().setTarget('local', [{ id: 'src', title: 'src' }]);
    await services.panes.right.getState().setTarget(destination);
    services.panes.left.getState().select('d1', 'replace', ['d1']);
    services.duplicates.ask = async () => ({ action: 'ignore' });
    /** starts a transfer and waits for its review */
    const review = async () => {
      const done = services.actions.transferSelection('left', 'right');
      await vi.waitFor(() => expect(services.ui.getState().metadataReview).not.toBeNull());
      return { question: services.ui.getState().metadataReview!, done };
    };
    return { services, transfer, review };
  }

  it("shows the source's metadata (GET metadata/); cancelling sends nothing, going ahead unedited sends none of its own", async () => {
    const { services, transfer, review } = await setupReview(async () => SOURCE);
    const first = await review();
    expect(services.api.metadata).toHaveBeenCalledWith('local', 'd1');
    expect(first.question).toMatchObject({
      target: 'zenodo',
      readError: null,
      passedThrough: ['related identifiers'],
      metadata: { title: 'Coastal Survey', description: 'CTD casts', creators: 'Ada Lovelace\nCharles Babbage', keywords: 'ocean', license: '' },
    });
    first.question.answer(null);
    await first.done;
    expect(transfer).not.toHaveBeenCalled();

    const second = await review();
    second.question.answer(second.question.metadata);
    await second.done;
    expect(transfer).toHaveBeenCalledWith('zenodo', null, { target: 'local', id: 'd1', ids: undefined }, 'ignore', { provenance: true, metadata: undefined });
  });

  it('sends the edited copy as the transfer\'s metadata, keeping what the form does not show, and a retry sends it again', async () => {
    const { services, transfer, review } = await setupReview(async () => SOURCE);
    const { question, done } = await review();
    question.answer({ ...question.metadata, description: 'CTD casts, 2024', creators: 'Ada Lovelace\nGrace Hopper', license: 'CC-BY-4.0', publication_date: '2024-05-01' });
    await done;
    const sent: DescriptiveMetadata = {
      title: 'Coastal Survey',
      description: 'CTD casts, 2024',
      creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097' }, { name: 'Grace Hopper' }],
      keywords: ['ocean'],
      license: 'CC-BY-4.0',
      publication_date: '2024-05-01',
      related_identifiers: [{ identifier: '10.1234/x', relation: 'isSupplementTo' }],
    };
    expect(transfer).toHaveBeenCalledWith('zenodo', null, expect.objectContaining({ id: 'd1' }), 'ignore', { provenance: true, metadata: sent });
    expect(await services.actions.retryJob('t1')).toBeNull();
    expect(transfer).toHaveBeenLastCalledWith('zenodo', null, expect.objectContaining({ id: 'd1' }), 'ignore', { provenance: true, metadata: sent });
  });

  it('says when the metadata could not be read, and shows nothing for a source that describes nothing', async () => {
    const failing = await setupReview(async () => {
      throw new ApiRequestError('OSF is not answering (HTTP 503).', 503, 'upstream_unavailable');
    });
    const failed = await failing.review();
    expect(failed.question).toMatchObject({ readError: 'OSF is not answering (HTTP 503).', metadata: { title: 'survey', description: '' } });
    failed.question.answer(null);
    await failed.done;

    const silent = await setupReview(async () => {
      throw new ApiRequestError('Local folders resources carry no descriptive metadata Ferry can read.', 405, 'action_not_supported');
    });
    const none = await silent.review();
    expect(none.question).toMatchObject({ readError: null, passedThrough: [], metadata: { title: 'survey', creators: '' } });
    none.question.answer(null);
    await none.done;
  });

  it("is asked wherever the target says keeps_metadata (no list of the renderer's own), never into a folder", async () => {
    const { services, transfer, review } = await setupReview(async () => ({}), 'figshare');
    const { question, done } = await review();
    expect(question.target).toBe('figshare');
    question.answer(question.metadata);
    await done;
    await services.panes.right.getState().setTarget('zenodo', [{ id: 'rec1', title: 'record' }]);
    await services.actions.transferSelection('left', 'right');
    await services.panes.right.getState().setTarget('local');
    await services.actions.transferSelection('left', 'right');
    expect(services.ui.getState().metadataReview).toBeNull();
    expect(transfer).toHaveBeenCalledTimes(3);
  });
});
