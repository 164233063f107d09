// The upload body: a ZIP made on the fly with client-zip, which streams each File (never
// reading one whole into memory). Chromium backs the resulting Blob with its blob store,
// which spills to disk for large bodies, and streams it again when the form is sent.
import { downloadZip } from 'client-zip';
import type { UploadPlan } from './collect.js';

type ZipInput = { name: string; input: File; lastModified: Date } | { name: string; lastModified?: Date };

function* zipInputs(plan: UploadPlan): Generator<ZipInput> {
  if (plan.folder !== null && plan.files.length === 0 && plan.emptyFolders.length === 0) {
    yield { name: `${plan.folder}/` };
  }
  for (const folder of plan.emptyFolders) yield { name: `${folder}/` };
  for (const { path, file } of plan.files) {
    yield { name: path, input: file, lastModified: new Date(file.lastModified || Date.now()) };
  }
}

export function zipStream(plan: UploadPlan): Response {
  return downloadZip(zipInputs(plan) as Iterable<never>);
}

export async function zipBlob(plan: UploadPlan): Promise<Blob> {
  const blob = await zipStream(plan).blob();
  // slice() relabels without copying the bytes
  return blob.slice(0, blob.size, 'application/zip');
}

/** A ZIP holding one empty folder: how "New folder" is made through the upload route. */
export function newFolderPlan(name: string): UploadPlan {
  return { folder: name, files: [], emptyFolders: [] };
}
