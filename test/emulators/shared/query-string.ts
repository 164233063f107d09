/**
 * What an OpenSearch `query_string` query with no `fields` and the default operator matches,
 * reduced to what Ferry's tests send: InvenioRDM (and Zenodo, which runs it) passes `q` to
 * the search engine as `dsl.Q("query_string", query=q)` (invenio-records-resources
 * services/records/queryparser/query.py QueryParser.parse), searched over every field
 * (`index.query.default_field` is `*`) with `default_operator` OR, on text the standard
 * analyzer lowercased and split at non-letters and non-digits. So: a record matches when any
 * term (or quoted phrase) is a whole word of any of its texts; `word*` matches a word prefix;
 * `*` matches everything. Field names (`title:x`) and boolean operators are not modelled.
 */
export function matchesQueryString(q: string, texts: readonly string[]): boolean {
  const query = q.trim();
  if (query === '' || query === '*') return true;
  const words = texts.flatMap(analyze);
  const joined = ` ${words.join(' ')} `;
  return [...query.matchAll(/"([^"]*)"|(\S+)/g)].some((m) => {
    if (m[1] !== undefined) {
      const phrase = analyze(m[1]);
      return phrase.length > 0 && joined.includes(` ${phrase.join(' ')} `);
    }
    const term = m[2]!;
    const prefix = term.endsWith('*');
    const tokens = analyze(term);
    if (tokens.length === 0) return false;
    if (prefix && tokens.length === 1) return words.some((word) => word.startsWith(tokens[0]!));
    // a term the analyzer splits ("raw-data") becomes the words in a row, as OpenSearch makes it
    return joined.includes(` ${tokens.join(' ')} `);
  });
}

/**
 * The standard analyzer, near enough: lowercase, split at anything not a letter or digit.
 * (The real one, Unicode word segmentation, keeps `reef_notes` and `notes.csv` whole; here
 * they split, so the emulator matches a little more than the service. No test relies on it.)
 */
function analyze(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}
