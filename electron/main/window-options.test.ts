import { describe, expect, it } from 'vitest';
import {
  buildWindowOptions,
  CONTENT_SECURITY_POLICY,
  isAppUrl,
  isPermissionAllowed,
  isSafeExternalUrl,
} from './window-options.js';
import { isApiDownloadPath, safeFileName } from './downloads.js';

function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

describe('window options (Electron security checklist)', () => {
  const options = buildWindowOptions('/app/out/preload/index.cjs');
  const web = options.webPreferences!;

  it('isolates and sandboxes the renderer, without Node', () => {
    expect(web.preload).toBe('/app/out/preload/index.cjs');
    expect(web.contextIsolation).toBe(true);
    expect(web.sandbox).toBe(true);
    expect(web.nodeIntegration).toBe(false);
    expect(web.nodeIntegrationInWorker).toBe(false);
    expect(web.nodeIntegrationInSubFrames).toBe(false);
  });

  it('keeps web security on and risky features off', () => {
    expect(web.webSecurity).toBe(true);
    expect(web.allowRunningInsecureContent).toBe(false);
    expect(web.experimentalFeatures).toBe(false);
    expect(web.webviewTag).toBe(false);
    expect(web).not.toHaveProperty('enableBlinkFeatures');
    expect(web.navigateOnDragDrop).toBe(false);
  });

  it('restores remembered bounds', () => {
    const restored = buildWindowOptions('/p', { width: 900, height: 700, x: 10, y: 20 });
    expect([restored.width, restored.height, restored.x, restored.y]).toEqual([900, 700, 10, 20]);
  });
});

describe('content security policy', () => {
  const csp = directives(CONTENT_SECURITY_POLICY);

  it('denies by default and allows scripts only from the app itself', () => {
    expect(csp.get('default-src')).toEqual(["'none'"]);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  });

  it('talks only to its own origin and cannot be framed, posted away or re-based', () => {
    expect(csp.get('connect-src')).toEqual(["'self'"]);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('form-action')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
  });
});

describe('URL policies', () => {
  const app = 'http://127.0.0.1:4711';

  it('recognises only the exact app origin (parsed, not by prefix)', () => {
    expect(isAppUrl('http://127.0.0.1:4711/#x', app)).toBe(true);
    expect(isAppUrl('http://127.0.0.1:4711/api_v1/', app)).toBe(true);
    expect(isAppUrl('http://127.0.0.1:47110/', app)).toBe(false);
    expect(isAppUrl('http://127.0.0.1:4711.evil.com/', app)).toBe(false);
    expect(isAppUrl('http://localhost:4711/', app)).toBe(false);
    expect(isAppUrl('file:///etc/passwd', app)).toBe(false);
    expect(isAppUrl('not a url', app)).toBe(false);
    expect(isAppUrl(undefined, app)).toBe(false);
  });

  it('opens only plain web links externally', () => {
    expect(isSafeExternalUrl('https://osf.io/abcd/')).toBe(true);
    expect(isSafeExternalUrl('http://example.org')).toBe(true);
    expect(isSafeExternalUrl('file:///C:/Windows/system32/calc.exe')).toBe(false);
    expect(isSafeExternalUrl('smb://host/share')).toBe(false);
    expect(isSafeExternalUrl('javascript:alert(1)')).toBe(false);
    expect(isSafeExternalUrl('https://user:pass@example.org/')).toBe(false);
    expect(isSafeExternalUrl('')).toBe(false);
  });

  it('refuses permissions except clipboard writes from the app', () => {
    expect(isPermissionAllowed('clipboard-sanitized-write', `${app}/`, app)).toBe(true);
    expect(isPermissionAllowed('clipboard-sanitized-write', 'https://evil.example/', app)).toBe(false);
    for (const permission of ['media', 'geolocation', 'notifications', 'openExternal', 'fileSystem', 'clipboard-read']) {
      expect(isPermissionAllowed(permission, `${app}/`, app)).toBe(false);
    }
  });

  it('lets main download only Ferry ZIP routes, to safe file names', () => {
    expect(isApiDownloadPath('/api_v1/targets/local/resources/abc.zip/')).toBe(true);
    expect(isApiDownloadPath('/api_v1/targets/local/resources/abc.zip/?keep=1')).toBe(true);
    expect(isApiDownloadPath('http://evil/api_v1/targets/local/resources/abc.zip/')).toBe(false);
    expect(isApiDownloadPath('/api_v1/targets/local/resources/../../x.zip/')).toBe(false);
    expect(safeFileName('a/b:c*.zip')).toBe('a_b_c_.zip');
    expect(safeFileName('CON')).toBe('download');
  });
});
