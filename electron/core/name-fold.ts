// One spelling for names a person, or a disk that ignores case or Unicode normalisation
// (macOS, Windows), takes as one: NFC, then lower case. The write planner's duplicates, the
// local writer's same-name checks and the name search compare by it; the rule lives here once.

/** Whether every character of `text` is ASCII (then it is its own NFC form, and its bytes its characters). */
export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * `name` in its one spelling. An ASCII name skips the normaliser, which goes through ICU at
 * ~4 µs a call even when nothing changes (the local writer folds every file's path, some twice).
 */
export function foldName(name: string): string {
  return isAscii(name) ? name.toLowerCase() : name.normalize('NFC').toLowerCase();
}
