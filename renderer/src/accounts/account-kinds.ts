// What each service asks for, and how the fields become the one "token" the core keeps in
// the keychain. The core's parsers (electron/core/targets/*/credentials.ts) stay the judge:
// this module only spares a person from writing JSON by hand, so a composed token is
// exactly the JSON shape the README documents for that target.

export interface AccountField {
  key: string;
  label: string;
  /** secret fields are password inputs and are cleared once saved */
  kind: 'url' | 'text' | 'secret';
  required: boolean;
  placeholder?: string;
}

export interface AccountKind {
  fields: AccountField[];
  /** where the token is made and what it must allow (README, "Connecting research repositories") */
  help: { text: string; href?: string; scopes?: string };
}

export type Composed = { token: string } | { problem: string };

const TOKEN: AccountField = { key: 'token', label: 'Token', kind: 'secret', required: true, placeholder: 'Paste a personal access token' };

const KINDS: Record<string, AccountKind> = {
  osf: {
    fields: [TOKEN],
    help: { text: 'Make a personal access token in your OSF settings.', href: 'https://osf.io/settings/tokens', scopes: 'osf.full_read to browse and download, osf.full_write to upload' },
  },
  github: {
    fields: [TOKEN],
    help: {
      text: 'Make a token under Settings → Developer settings → Personal access tokens.',
      href: 'https://github.com/settings/tokens',
      scopes: 'classic: repo (public_repo for public repositories only); fine-grained: Contents read/write, Administration write to create repositories',
    },
  },
  gitlab: {
    fields: [TOKEN],
    help: {
      text: 'Make a token under User settings → Access tokens on your GitLab instance.',
      href: 'https://gitlab.com/-/user_settings/personal_access_tokens',
      scopes: 'api to upload and create projects, read_api to browse and download',
    },
  },
  zenodo: {
    fields: [TOKEN],
    help: { text: 'Make a personal access token in your Zenodo account.', href: 'https://zenodo.org/account/settings/applications/tokens/new/', scopes: 'deposit:write, deposit:actions' },
  },
  figshare: {
    fields: [TOKEN],
    help: { text: 'Make a personal token under Applications in your figshare account (it grants full access).', href: 'https://figshare.com/account/applications' },
  },
  webdav: {
    fields: [
      { key: 'url', label: 'Server URL', kind: 'url', required: true, placeholder: 'https://cloud.example.org/remote.php/dav/files/<user>/' },
      { key: 'username', label: 'User', kind: 'text', required: true },
      { key: 'password', label: 'App password', kind: 'secret', required: true },
    ],
    help: { text: 'Use an app password, not your login password (Nextcloud: Settings → Security → Devices & sessions).' },
  },
  git: {
    fields: [
      { key: 'url', label: 'Repository URL', kind: 'url', required: true, placeholder: 'https://git.example.org/<owner>/<repository>.git' },
      { key: 'username', label: 'User', kind: 'text', required: true },
      { key: 'password', label: 'Token', kind: 'secret', required: true, placeholder: 'Access token or app password' },
      { key: 'branch', label: 'Branch', kind: 'text', required: false, placeholder: "the repository's default" },
    ],
    help: { text: "Use the host's access token or app password.", scopes: 'write access to the repository (Gitea/Forgejo: write:repository)' },
  },
  dataverse: {
    fields: [
      { key: 'url', label: 'Installation URL', kind: 'url', required: true, placeholder: 'https://dataverse.harvard.edu' },
      { key: 'token', label: 'API token', kind: 'secret', required: true },
      { key: 'collection', label: 'Collection', kind: 'text', required: false, placeholder: ':root (where new datasets go)' },
    ],
    help: { text: 'On the installation: your name in the top bar → API Token → Create Token. It carries your full rights there; treat it like your password.' },
  },
  invenio: {
    fields: [
      { key: 'url', label: 'Instance URL', kind: 'url', required: true, placeholder: 'https://repository.example.org' },
      { key: 'token', label: 'Token', kind: 'secret', required: true },
    ],
    help: { text: 'On the instance: Applications → Personal access tokens.', scopes: 'deposit:write' },
  },
};

const PLAIN: AccountKind = { fields: [TOKEN], help: { text: "Paste the service's access token." } };

export function accountKind(target: string): AccountKind {
  return KINDS[target] ?? PLAIN;
}

/**
 * The token for these field values, or the sentence saying what is missing. A lone token
 * field is sent as it is; several fields become the JSON the target's parser reads
 * (empty optional fields are left out, so the target's default applies).
 */
export function composeToken(kind: AccountKind, values: Readonly<Record<string, string>>, serviceName: string): Composed {
  const clean: Record<string, string> = {};
  for (const field of kind.fields) {
    const value = (values[field.key] ?? '').trim();
    if (!value) {
      if (field.required) return { problem: `Enter the ${field.label.toLowerCase()} for ${serviceName}.` };
      continue;
    }
    if (field.kind === 'url' && !/^https?:\/\/[^\s/]+/i.test(value)) {
      return { problem: `The ${field.label.toLowerCase()} must start with https:// (or http://), e.g. ${field.placeholder ?? 'https://example.org'}.` };
    }
    clean[field.key] = value;
  }
  if (kind.fields.length === 1) return { token: clean[kind.fields[0]!.key]! };
  return { token: JSON.stringify(clean) };
}

export function isEmpty(values: Readonly<Record<string, string>>): boolean {
  return Object.values(values).every((v) => v.trim() === '');
}
