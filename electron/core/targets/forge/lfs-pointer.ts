/** Git LFS pointer files are tiny text files that start with this line (git-lfs spec v1). */
const LFS_POINTER_PREFIX = 'version https://git-lfs.github.com/spec/v1';
/** The spec caps pointer files well below this size; larger blobs are never pointers. */
export const LFS_POINTER_MAX_BYTES = 1024;

export function parseLfsPointer(bytes: Buffer): { oid: string; size: number } | null {
  if (bytes.length > LFS_POINTER_MAX_BYTES) return null;
  const text = bytes.toString('utf8');
  if (!text.startsWith(LFS_POINTER_PREFIX)) return null;
  const oid = /^oid sha256:([0-9a-f]{64})$/m.exec(text)?.[1];
  const size = /^size (\d+)$/m.exec(text)?.[1];
  return oid && size ? { oid, size: Number(size) } : null;
}
