import { describe, expect, it } from 'vitest';
import { MENU_COMMANDS, type MenuCommand } from '../../shared/ipc.js';

describe('menu commands', () => {
  it('the preload allowlist holds every command the menu can send (a missing one would be dropped silently)', () => {
    // a Record over the union: adding a MenuCommand without listing it here fails to compile
    const every: Record<MenuCommand, true> = {
      upload: true,
      'new-folder': true,
      refresh: true,
      download: true,
      transfer: true,
      verify: true,
      accounts: true,
      'toggle-jobs': true,
    };
    expect([...MENU_COMMANDS].sort()).toEqual(Object.keys(every).sort());
  });
});
