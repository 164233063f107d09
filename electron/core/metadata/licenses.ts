// Licences as services name them. The common model holds an SPDX identifier where one is
// known (target.ts DescriptiveMetadata.license); services name licences by URL (RO-Crate,
// figshare), by their own vocabulary ids (InvenioRDM: the SPDX id in lower case) or by
// name (Dataverse's licences, OSF's: GET /v2/licenses/). One table maps them, so every reader and writer agrees.

interface KnownLicense {
  spdx: string;
  /** the licence's canonical URL, and the other spellings of it services use */
  urls: string[];
  names: string[];
}

const KNOWN: readonly KnownLicense[] = [
  { spdx: 'CC0-1.0', urls: ['https://creativecommons.org/publicdomain/zero/1.0/'], names: ['CC0 1.0', 'CC0', 'CC0 1.0 Universal', 'CC0 Waiver'] },
  { spdx: 'CC-BY-4.0', urls: ['https://creativecommons.org/licenses/by/4.0/'], names: ['CC BY 4.0', 'CC-BY 4.0', 'Creative Commons Attribution 4.0 International', 'CC-By Attribution 4.0 International'] },
  { spdx: 'CC-BY-SA-4.0', urls: ['https://creativecommons.org/licenses/by-sa/4.0/'], names: ['CC BY-SA 4.0', 'CC-BY Attribution-ShareAlike 4.0 International'] },
  { spdx: 'CC-BY-NC-4.0', urls: ['https://creativecommons.org/licenses/by-nc/4.0/'], names: ['CC BY-NC 4.0', 'CC-BY Attribution-NonCommercial 4.0 International'] },
  { spdx: 'CC-BY-NC-ND-4.0', urls: ['https://creativecommons.org/licenses/by-nc-nd/4.0/'], names: ['CC BY-NC-ND 4.0', 'CC-By Attribution-NonCommercial-NoDerivatives 4.0 International'] },
  { spdx: 'MIT', urls: ['https://opensource.org/licenses/MIT', 'https://opensource.org/license/mit/'], names: ['MIT', 'MIT License'] },
  { spdx: 'Apache-2.0', urls: ['https://www.apache.org/licenses/LICENSE-2.0', 'https://www.apache.org/licenses/LICENSE-2.0.html'], names: ['Apache 2.0', 'Apache License 2.0'] },
  { spdx: 'GPL-3.0-or-later', urls: ['https://www.gnu.org/licenses/gpl-3.0.html'], names: ['GPL 3.0+', 'GPL-3.0+'] },
  { spdx: 'GPL-2.0-or-later', urls: ['https://www.gnu.org/licenses/old-licenses/gpl-2.0.html'], names: ['GPL 2.0+', 'GPL-2.0+'] },
  { spdx: 'GPL-3.0-only', urls: ['https://www.gnu.org/licenses/gpl-3.0.txt'], names: ['GPL', 'GPL-3.0', 'GNU General Public License (GPL) 3.0'] },
  { spdx: 'GPL-2.0-only', urls: ['https://www.gnu.org/licenses/old-licenses/gpl-2.0.txt'], names: ['GPL-2.0', 'GNU General Public License (GPL) 2.0'] },
  { spdx: 'MPL-2.0', urls: ['https://www.mozilla.org/en-US/MPL/2.0/'], names: ['Mozilla Public License 2.0'] },
  { spdx: 'BSD-3-Clause', urls: ['https://opensource.org/licenses/BSD-3-Clause'], names: ['BSD 3-Clause'] },
];

/** http vs https, www, a trailing slash or ".html" do not make another licence. */
function urlKey(url: string): string {
  return url.trim().toLowerCase().replace(/^https?:\/\/(www\.)?/, '').replace(/(\.html|\/)$/, '');
}

const BY_URL = new Map(KNOWN.flatMap((license) => license.urls.map((url) => [urlKey(url), license] as const)));
const BY_NAME = new Map(KNOWN.flatMap((license) => [license.spdx, ...license.names].map((name) => [name.toLowerCase(), license] as const)));

/** The SPDX id for a licence URL, SPDX id or name Ferry knows; the input, trimmed, otherwise (passed on for a writer to set or report). */
export function spdxOf(urlIdOrName: string): string {
  const trimmed = urlIdOrName.trim();
  const known = /^https?:\/\//i.test(trimmed) ? BY_URL.get(urlKey(trimmed)) : BY_NAME.get(trimmed.toLowerCase());
  return known?.spdx ?? trimmed;
}

/** The canonical URL of an SPDX id Ferry knows, or null. */
export function licenseUrl(spdx: string): string | null {
  return BY_NAME.get(spdx.toLowerCase())?.urls[0] ?? null;
}

/** Whether two URLs name the same licence page. */
export function sameLicenseUrl(a: string, b: string): boolean {
  return urlKey(a) === urlKey(b);
}

/** Looks like an SPDX identifier (letters, digits, '.', '+', '-'), not a free-text name. */
export function isSpdxLike(license: string): boolean {
  return /^[A-Za-z0-9.+-]+$/.test(license);
}
