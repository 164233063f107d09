// The rclone remote types the Accounts form offers, as typed fields, and how the fields become
// the `{type, options}` of PUT /app/rclone-remotes/<name> (docs/targets/rclone.md). Option names
// are rclone's own (`rclone help backend s3|sftp|webdav`); the server refuses any other. Values
// are one line each: the server refuses line breaks, so a pasted PEM key is sent the way
// rclone's `key_pem` documents, its line endings written as `\n`.

export type RcloneType = 's3' | 'sftp' | 'webdav';

export interface RcloneField {
  /** rclone's option name */
  key: string;
  label: string;
  kind: 'text' | 'url' | 'number' | 'secret' | 'choice' | 'pem';
  required?: boolean;
  choices?: readonly { value: string; label: string }[];
  help?: string;
}

export interface RcloneKind {
  type: RcloneType;
  label: string;
  fields: readonly RcloneField[];
  /** a sentence when the values cannot make a working remote of this type, else null */
  problem?(values: Record<string, string>): string | null;
}

export const RCLONE_KINDS: readonly RcloneKind[] = [
  {
    type: 's3',
    label: 'S3 (Amazon, MinIO, Ceph, Wasabi …)',
    fields: [
      {
        key: 'provider',
        label: 'Provider',
        kind: 'choice',
        required: true,
        choices: [
          { value: 'AWS', label: 'Amazon Web Services' },
          { value: 'Minio', label: 'MinIO' },
          { value: 'Ceph', label: 'Ceph' },
          { value: 'Wasabi', label: 'Wasabi' },
          { value: 'Cloudflare', label: 'Cloudflare R2' },
          { value: 'Other', label: 'Other S3-compatible' },
        ],
      },
      { key: 'endpoint', label: 'Endpoint', kind: 'url', help: 'The service address, e.g. https://s3.example.org. Leave empty for Amazon.' },
      { key: 'region', label: 'Region', kind: 'text', help: 'e.g. eu-west-1; leave empty when the service has none.' },
      { key: 'access_key_id', label: 'Access key ID', kind: 'text', required: true },
      { key: 'secret_access_key', label: 'Secret access key', kind: 'secret', required: true },
    ],
    problem: (v) => (v.provider && v.provider !== 'AWS' && !v.endpoint ? 'Give the endpoint of this S3 service (only Amazon needs none).' : null),
  },
  {
    type: 'sftp',
    label: 'SFTP (SSH)',
    fields: [
      { key: 'host', label: 'Host', kind: 'text', required: true },
      { key: 'port', label: 'Port', kind: 'number', help: '22 when empty.' },
      { key: 'user', label: 'User', kind: 'text', required: true },
      { key: 'pass', label: 'Password', kind: 'secret', help: 'A password, or a private key below.' },
      { key: 'key_pem', label: 'Private key (PEM)', kind: 'pem', help: 'Paste the whole key, BEGIN to END lines included.' },
    ],
    problem: (v) => {
      if (!v.pass && !v.key_pem) return 'Give a password or a private key.';
      if (v.port && !(/^\d{1,5}$/.test(v.port) && Number(v.port) >= 1 && Number(v.port) <= 65535)) return 'The port is a number from 1 to 65535.';
      return null;
    },
  },
  {
    type: 'webdav',
    label: 'WebDAV (Nextcloud, ownCloud, SharePoint …)',
    fields: [
      { key: 'url', label: 'URL', kind: 'url', required: true, help: 'e.g. https://cloud.example.org/remote.php/dav/files/alice/' },
      {
        key: 'vendor',
        label: 'Server',
        kind: 'choice',
        required: true,
        choices: [
          { value: 'nextcloud', label: 'Nextcloud' },
          { value: 'owncloud', label: 'ownCloud' },
          { value: 'sharepoint', label: 'SharePoint Online' },
          { value: 'sharepoint-ntlm', label: 'SharePoint (NTLM, on premises)' },
          { value: 'other', label: 'Other' },
        ],
      },
      { key: 'user', label: 'User', kind: 'text' },
      { key: 'pass', label: 'Password', kind: 'secret' },
    ],
    problem: (v) => (v.url && !/^https?:\/\//i.test(v.url) ? 'The URL starts with https:// (or http://).' : null),
  },
];

export function rcloneKind(type: RcloneType): RcloneKind {
  return RCLONE_KINDS.find((kind) => kind.type === type)!;
}

/** rclone turns a target into `rclone-<name>`: the server's rule, said before sending. */
export function remoteNameProblem(name: string): string | null {
  return /^[a-z0-9][a-z0-9_-]{0,39}$/.test(name) ? null : 'The name is 1 to 40 lowercase letters, digits, - and _, starting with a letter or digit.';
}

/**
 * The options to send: empty fields left out (rclone's defaults apply), values trimmed except
 * secrets, a PEM key on one line with `\n` for its line endings; or the first problem.
 */
export function rcloneOptions(type: RcloneType, values: Record<string, string>): { options: Record<string, string> } | { problem: string } {
  const kind = rcloneKind(type);
  const options: Record<string, string> = {};
  for (const field of kind.fields) {
    const raw = values[field.key] ?? '';
    const value = field.kind === 'secret' ? raw : field.kind === 'pem' ? raw.trim().replace(/\r\n|\r|\n/g, '\\n') : raw.trim();
    if (value === '') {
      if (field.required) return { problem: `${field.label} is needed.` };
      continue;
    }
    if (field.kind !== 'pem' && /[\r\n]/.test(value)) return { problem: `${field.label} must be one line.` };
    options[field.key] = value;
  }
  const problem = kind.problem?.(options) ?? null;
  return problem ? { problem } : { options };
}
