import type { ResourceNode } from './target.js';

// A listing's rows as columns over one buffer of bytes (TargetCapabilities.columnarListing),
// for a target that already holds them that way (the offline index keeps every id as ASCII
// bytes): the HTTP layer copies a row's id, container and title as bytes, with no node object
// and no string per row. A listing of 100,000 archive entries as nodes cost more in objects,
// strings and their garbage than in its bytes.

/** NodeColumns.containerStart of a row whose container is the archive itself (NodeColumns.rootId). */
export const ROOT_CONTAINER = 0xffffffff;

/**
 * One batch of rows. Row `r`'s id is `idPrefix` then idText[idStart..idEnd) (ends exclusive),
 * its container's id likewise (or rootId), its title pathBytes[titleStart..titleEnd).
 */
export class NodeColumns {
  count = 0;
  /** 1 for a folder (kind 'container', kind_name 'folder'), 0 for a file ('item', 'file') */
  readonly folder: Uint8Array;
  readonly idStart: Uint32Array;
  readonly idEnd: Uint32Array;
  /** ROOT_CONTAINER for a row at the archive's top */
  readonly containerStart: Uint32Array;
  readonly containerEnd: Uint32Array;
  /** 1 when titleStart..titleEnd of pathBytes are the title's characters and need no JSON escape; else see titleText */
  readonly titlePlain: Uint8Array;
  readonly titleStart: Uint32Array;
  readonly titleEnd: Uint32Array;

  constructor(
    /** ASCII: the archive's id and '-' */
    readonly idPrefix: Uint8Array,
    /** ASCII: the archive's id */
    readonly rootId: Uint8Array,
    /** ASCII: base64url text */
    readonly idText: Uint8Array,
    /** plain titles are printable ASCII without '"' or '\' here */
    readonly pathBytes: Uint8Array,
    capacity: number,
  ) {
    this.folder = new Uint8Array(capacity);
    this.idStart = new Uint32Array(capacity);
    this.idEnd = new Uint32Array(capacity);
    this.containerStart = new Uint32Array(capacity);
    this.containerEnd = new Uint32Array(capacity);
    this.titlePlain = new Uint8Array(capacity);
    this.titleStart = new Uint32Array(capacity);
    this.titleEnd = new Uint32Array(capacity);
  }

  /** the paths of the rows whose title is not plain (see setTitleText) */
  private readonly paths: (string | undefined)[] = [];

  /** The title of row `r` when it is not plain. */
  titleText(r: number): string {
    return this.paths[r]!.slice(this.titleStart[r]!);
  }

  /** Row `r`'s title is not plain: it is `path` from `titleStart` on. */
  setTitleText(r: number, path: string, titleStart: number): void {
    this.titlePlain[r] = 0;
    this.titleStart[r] = titleStart;
    this.paths[r] = path;
  }

  /** Row `r` as a node (for tests and any reader that wants objects). */
  node(r: number): ResourceNode {
    const latin1 = (bytes: Uint8Array, start: number, end: number) => Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
    const prefix = latin1(this.idPrefix, 0, this.idPrefix.length);
    const isFolder = this.folder[r] === 1;
    const containerStart = this.containerStart[r]!;
    return {
      kind: isFolder ? 'container' : 'item',
      kind_name: isFolder ? 'folder' : 'file',
      id: prefix + latin1(this.idText, this.idStart[r]!, this.idEnd[r]!),
      container: containerStart === ROOT_CONTAINER ? latin1(this.rootId, 0, this.rootId.length) : prefix + latin1(this.idText, containerStart, this.containerEnd[r]!),
      title: this.titlePlain[r] ? latin1(this.pathBytes, this.titleStart[r]!, this.titleEnd[r]!) : this.titleText(r),
    };
  }
}
