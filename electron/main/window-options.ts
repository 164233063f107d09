// The window's security settings and URL policies as plain data and pure functions, so a
// Vitest test can check them without Electron (the Electron checklist items they cover are
// noted). index.ts feeds these to Electron; nothing here imports electron at runtime.
import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * Checklist item 7: a restrictive CSP, sent as a response header for the app's pages.
 * Scripts, styles and connections only from the app's own origin (the local server);
 * no inline script, no eval, no plugins, no framing, no form posts elsewhere.
 */
export const CSP_DIRECTIVES: Readonly<Record<string, string>> = {
  'default-src': "'none'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'font-src': "'self'",
  'connect-src': "'self'",
  'worker-src': "'self'",
  'manifest-src': "'self'",
  'object-src': "'none'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-src': "'none'",
  'frame-ancestors': "'none'",
};

export function buildContentSecurityPolicy(directives: Readonly<Record<string, string>> = CSP_DIRECTIVES): string {
  return Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

export const CONTENT_SECURITY_POLICY = buildContentSecurityPolicy();

export const DEFAULT_BOUNDS = { width: 1280, height: 820 };

export function buildWindowOptions(
  preloadPath: string,
  bounds: { width?: number; height?: number; x?: number; y?: number } = {},
  /** a packaged app has no use for DevTools; a development build does */
  allowDevTools = false,
): BrowserWindowConstructorOptions {
  return {
    width: bounds.width ?? DEFAULT_BOUNDS.width,
    height: bounds.height ?? DEFAULT_BOUNDS.height,
    ...(bounds.x !== undefined && bounds.y !== undefined ? { x: bounds.x, y: bounds.y } : {}),
    minWidth: 760,
    minHeight: 480,
    title: 'Ferry',
    show: false, // shown on ready-to-show: no white flash
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true, // item 3
      sandbox: true, // item 4 (the preload is CommonJS so it can run sandboxed)
      nodeIntegration: false, // item 2
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true, // item 6
      allowRunningInsecureContent: false, // item 8
      experimentalFeatures: false, // item 9
      // item 10: no enableBlinkFeatures
      webviewTag: false, // items 11-12: no <webview> at all
      navigateOnDragDrop: false, // a file dropped outside a drop zone must not replace the app
      safeDialogs: true,
      spellcheck: false,
      devTools: allowDevTools,
    },
  };
}

/** Items 13 and 17: compare parsed origins, never string prefixes. */
export function isAppUrl(url: string | undefined | null, appOrigin: string): boolean {
  if (!url) return false;
  try {
    const parsed = new URL(url);
    return parsed.origin !== 'null' && parsed.origin === new URL(appOrigin).origin;
  } catch {
    return false;
  }
}

/** Item 15: only plain web links go to the system browser (no file:, no custom schemes, no credentials). */
export function isSafeExternalUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return false;
  if (parsed.username || parsed.password) return false;
  if (!parsed.hostname) return false;
  return true;
}

/**
 * Item 5: every permission is refused, except writing text to the clipboard from the app's
 * own page (the "Copy" buttons next to hashes).
 */
export function isPermissionAllowed(permission: string, requestingUrl: string | undefined, appOrigin: string): boolean {
  return permission === 'clipboard-sanitized-write' && isAppUrl(requestingUrl, appOrigin);
}
