import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { makeZip, predictLength } from 'client-zip';

/**
 * Dataverse unpacks every ZIP that arrives through the native add API into its members
 * (CreateNewDataFilesCommand: type `application/zip`, recognised by content). A user who
 * uploads `results.zip` means the ZIP, so Ferry sends it inside a ZIP of its own whose one
 * member is the file: Dataverse unpacks the outer one and keeps the inner file as it was,
 * bytes and checksum unchanged (the Dataverse User Guide's "double-zip" advice). The member's
 * path carries the folder as well, since an unpacked member's folder comes from its path.
 * Stored, not compressed (client-zip only stores), so the size is known in advance.
 */
export function isZipName(name: string): boolean {
  return /\.zip$/i.test(name);
}

export function wrapInZip(memberPath: string, size: number, open: () => Promise<Readable>): { size: number; open(): Promise<Readable> } {
  const lastModified = new Date('2000-01-01T00:00:00Z');
  return {
    size: Number(predictLength([{ name: memberPath, size, lastModified }])),
    open: async () => {
      const source = await open();
      const zip = makeZip([{ name: memberPath, input: source as AsyncIterable<Buffer>, size, lastModified }]);
      return Readable.fromWeb(zip as unknown as WebReadableStream<Uint8Array>);
    },
  };
}
